/* regex_order_ids.c — the regex template "regex_order_ids": from support
 * messages and ticket notes, extract the order ids of one drawn shape
 * (prefix, separator, digit count, whether the prefix's case matters) that
 * stand as tokens of their own.  The trap is the same shape without word
 * boundaries, armed by planted decoys (XORD-123456, ORD-1234567,
 * ORD-123456X) in every line set; the other decoys (short and masked ids,
 * other separators, other cases, near prefixes) make each part of the gold
 * pattern matter on the held-out lines.  From level 3 the held-out lines
 * also hold two kinds held back from the lower levels: a separator
 * doubled or spaced and digits typed in two chunks.
 * Exports vat_tmpl_regex_order_ids. */
#include <stdio.h>
#include <string.h>

#include "level.h"
#include "prompt.h"
#include "regexgen.h"
#include "template.h"

/* ---- the shape space ----------------------------------------------------- */

/* Upper-case letters only: the near-prefix and case decoys rely on it.
 * None is a prefix of the {id} filler (REQ, JOB, TX, SES).  The first
 * eight are the prefixes of vat 0.1. */
static const char *const prefixes[] = {
    "ORD", "PO",  "SO",  "RMA", "WO",  "ORDR", "CO",  "SHP", "INV", "BO",  "DO",  "PR",  "RO",
    "SR",  "TO",  "WH",  "OR",  "PK",  "DN",   "GRN", "ASN", "CRN", "OD",  "PU",  "DL",  "TR",
    "CM",  "AP",  "AR",  "GL",  "HO",  "BK",   "BKG", "RSV", "CS",  "CSO", "EO",  "IO",  "MO",
    "NO",  "PL",  "QO",  "TKT", "FO",  "LO",   "OID", "ORX", "POR", "SOR", "WOR", "DEL", "DSP",
    "PCK", "RTN", "RFD", "EXC", "CLM", "QTE",  "CNT", "BL",  "AWB", "MAWB", "HAWB", "CNS"};
#define N_PREFIXES ((int)(sizeof prefixes / sizeof *prefixes))
/* 0 is "no separator"; '.' and '/' are escaped or literal in the
 * pattern as needed. */
static const char seps[] = {'-', '_', '#', '.', '/', 0};
#define N_SEPS 6
/* The digit count: exactly DIGITS_MIN..DIGITS_MIN+N_DIGITS-1, or that many
 * up to one or two more (a range, "5 or 6 digits"). */
#define DIGITS_MIN 4
#define N_DIGITS 6
#define N_WIDTHS 3
#define N_FORMATS (N_PREFIXES * N_SEPS * N_DIGITS * N_WIDTHS * 2)
_Static_assert(N_FORMATS > 10000, "regex_order_ids admits more than 10,000 distinct golds");

struct fmt {
    const char *prefix;
    char sep;      /* 0: the digits follow the prefix directly     */
    int digits;    /* fewest digits: DIGITS_MIN .. DIGITS_MIN + N_DIGITS - 1 */
    int digits_max; /* most digits: digits .. digits + N_WIDTHS - 1         */
    bool any_case; /* the prefix counts in any mix of upper/lower   */
};

static struct fmt fmt_from_index(unsigned f)
{
    struct fmt x;
    x.prefix = prefixes[f % N_PREFIXES];
    f /= N_PREFIXES;
    x.sep = seps[f % N_SEPS];
    f /= N_SEPS;
    x.digits = DIGITS_MIN + (int)(f % N_DIGITS);
    f /= N_DIGITS;
    x.digits_max = x.digits + (int)(f % N_WIDTHS);
    f /= N_WIDTHS;
    x.any_case = f % 2 != 0;
    return x;
}

/* How hard shape f is to write a pattern for (0 the easiest): no
 * separator or one a pattern must escape or may misread ('.', '#', '/'),
 * each digit a range allows past the fewest, and a prefix in any case
 * (two: every letter a class, or a case-blind group).  Levels take their
 * shapes by it (vat_rx_choose_format). */
static unsigned fmt_hardness(unsigned f)
{
    struct fmt x = fmt_from_index(f);
    return (unsigned)(x.sep == 0 || x.sep == '.' || x.sep == '#' || x.sep == '/') +
           (unsigned)(x.digits_max - x.digits) + 2u * x.any_case;
}

/* "ORD-NNNNNN" for the prompt and params. */
static void fmt_shape(const struct fmt *x, char out[32])
{
    int k = snprintf(out, 24, "%s", x->prefix);
    if (x->sep)
        out[k++] = x->sep;
    for (int i = 0; i < x->digits; i++)
        out[k++] = 'N';
    for (int i = x->digits; i < x->digits_max; i++) {
        memcpy(out + k, "(N)", 3);
        k += 3;
    }
    out[k] = 0;
}

/* Reads the shape back from the task's params (what the prompt states),
 * so reference() derives gold from the question, not from generator state. */
static int fmt_from_params(const json_t *params, struct fmt *x, struct vat_err *e)
{
    const char *prefix = json_string_value(json_object_get(params, "prefix"));
    const char *sep = json_string_value(json_object_get(params, "separator"));
    const char *cs = json_string_value(json_object_get(params, "case"));
    json_int_t digits = json_integer_value(json_object_get(params, "digits"));
    if (!prefix || !sep || !cs || strlen(sep) > 1)
        return vat_err_set(e, "regex_order_ids: params lack prefix, separator or case");
    x->prefix = NULL;
    for (int i = 0; i < N_PREFIXES; i++)
        if (strcmp(prefix, prefixes[i]) == 0)
            x->prefix = prefixes[i];
    if (!x->prefix)
        return vat_err_set(e, "regex_order_ids: unknown prefix '%s'", prefix);
    x->sep = sep[0];
    if (x->sep && !memchr(seps, x->sep, N_SEPS - 1))
        return vat_err_set(e, "regex_order_ids: unknown separator '%s'", sep);
    if (digits < DIGITS_MIN || digits >= DIGITS_MIN + N_DIGITS)
        return vat_err_set(e, "regex_order_ids: digit count %lld out of range",
                           (long long)digits);
    x->digits = (int)digits;
    /* vat 0.1 params have no digits_max: an exact count */
    json_int_t dmax = json_object_get(params, "digits_max")
                          ? json_integer_value(json_object_get(params, "digits_max"))
                          : digits;
    if (dmax < digits || dmax >= digits + N_WIDTHS)
        return vat_err_set(e, "regex_order_ids: digits_max %lld out of range", (long long)dmax);
    x->digits_max = (int)dmax;
    if (strcmp(cs, "exact") != 0 && strcmp(cs, "any") != 0)
        return vat_err_set(e, "regex_order_ids: unknown case rule '%s'", cs);
    x->any_case = strcmp(cs, "any") == 0;
    return 0;
}

/* Builds the pattern of the question params state: gold with word
 * boundaries, or the trap without.  An any-case prefix is spelled letter
 * by letter as [Oo][Rr][Dd], the form that needs no flags.  Returns a new
 * string, or NULL with e set when params name no question. */
static char *build_pattern(const json_t *params, bool naive, struct vat_err *e)
{
    struct fmt q = {0};
    if (fmt_from_params(params, &q, e) != 0)
        return NULL;
    const struct fmt *x = &q;
    struct vat_buf b = VAT_BUF_INIT;
    if (!naive)
        vat_buf_puts(&b, "\\b");
    for (const char *p = x->prefix; *p; p++) {
        if (x->any_case)
            vat_buf_printf(&b, "[%c%c]", *p, *p - 'A' + 'a');
        else
            vat_buf_putc(&b, *p);
    }
    if (x->sep == '.')
        vat_buf_puts(&b, "\\"); /* a literal full stop */
    if (x->sep)
        vat_buf_putc(&b, x->sep);
    if (x->digits_max > x->digits)
        vat_buf_printf(&b, "\\d{%d,%d}", x->digits, x->digits_max);
    else
        vat_buf_printf(&b, "\\d{%d}", x->digits);
    if (!naive)
        vat_buf_puts(&b, "\\b");
    return vat_buf_detach(&b);
}

/* ---- planting ------------------------------------------------------------ */

/* What one slot of a line holds.  K_TARGET and K_PUNCT are always
 * targets, K_CASE is one when the prefix's case does not matter; every
 * other kind is a decoy the gold pattern must skip. */
enum kind {
    K_TARGET,       /* a valid id                                              */
    K_CASE,         /* the prefix in lower or capitalised case                 */
    K_GLUED_BEFORE, /* a letter, digit or underscore right before: XORD-...    */
    K_GLUED_AFTER,  /* a letter or underscore right after: ORD-123456X         */
    K_LONG,         /* one to three digits too many: ORD-1234567               */
    K_SHORT,        /* one or two digits too few: ORD-12345                    */
    K_OTHER_SEP,    /* another separator, a space, or none where one is asked  */
    K_MASKED,       /* digits masked with X: ORD-XXXX56                        */
    K_NEAR_PREFIX,  /* one letter of the prefix changed: ORG-123456            */
    K_PUNCT,        /* a valid id wrapped in punctuation: (ORD-123456).        */
    /* Held back for levels 3 to 5 (VAT_RX_HELD_BACK_LEVEL): weight 0,
     * required in the held-out lines only from that level on. */
    K_SEP_PADDED,   /* the separator doubled or spaced: ORD--123456, ORD - 123456 */
    K_DIGITS_SPLIT, /* the digits typed in two chunks: ORD-123 456             */
    N_KINDS
};
#define FIRST_HELD_BACK K_SEP_PADDED

static const unsigned kind_weights[N_KINDS] = {
    [K_TARGET] = 36,     [K_CASE] = 6,    [K_GLUED_BEFORE] = 6, [K_GLUED_AFTER] = 6,
    [K_LONG] = 6,        [K_SHORT] = 6,   [K_OTHER_SEP] = 7,    [K_MASKED] = 4,
    [K_NEAR_PREFIX] = 6, [K_PUNCT] = 10,
};

static void put_digits(char *out, struct vat_rng *r, int n)
{
    for (int i = 0; i < n; i++)
        out[i] = (char)('0' + vat_rng_below(r, 10));
    out[n] = 0;
}

/* prefix, separator (sep 0: none; sep ' ' and others as given), digits */
static void render(char *out, size_t cap, const char *prefix, char sep, const char *digits)
{
    if (sep)
        snprintf(out, cap, "%s%c%s", prefix, sep, digits);
    else
        snprintf(out, cap, "%s%s", prefix, digits);
}

static void plant(struct vat_rx_builder *b, struct vat_rng *r, const struct vat_rx_slot *slot,
                  const void *ctx)
{
    const struct fmt *x = ctx;
    int kind = slot->kind;
    char pre[8], dig[16], id[48], out[64], sepbuf[8];
    snprintf(pre, sizeof pre, "%s", x->prefix);
    size_t plen = strlen(pre);
    int nd = x->digits;
    if (x->digits_max > x->digits) {
        /* A range: the first two targets of a set take the fewest and the
         * most digits (so the hidden lines tell {5,6} from {5} and {6});
         * the rest any count in between.  Exact counts draw nothing here,
         * as in vat 0.1. */
        if (kind == K_TARGET && slot->seen < 2)
            nd = slot->seen == 0 ? x->digits : x->digits_max;
        else
            nd = (int)vat_rng_range(r, x->digits, x->digits_max);
    }
    char sep = x->sep;
    put_digits(dig, r, nd);

    switch ((enum kind)kind) {
    case K_CASE:
        /* all lower, or only the first letter upper ("Ord", "Po") */
        for (size_t i = vat_rng_chance(r, 0.5) ? 0 : 1; i < plen; i++)
            pre[i] = (char)(pre[i] - 'A' + 'a');
        break;
    case K_LONG:
    case K_SHORT: {
        /* The first of each set is off by exactly one digit, where a
         * near-miss count such as {5,7} is caught; later ones by more. */
        int by = slot->seen ? (int)vat_rng_range(r, 1, kind == K_LONG ? 3 : 2) : 1;
        nd = kind == K_LONG ? x->digits_max + by : x->digits - by;
        put_digits(dig, r, nd);
        break;
    }
    case K_OTHER_SEP: {
        static const char others[] = {'-', '_', '#', ' ', '/', '.', 0};
        char pick[8];
        size_t n = 0;
        for (size_t i = 0; i < sizeof others; i++)
            if (others[i] != x->sep)
                pick[n++] = others[i];
        sep = pick[vat_rng_below(r, (uint32_t)n)];
        break;
    }
    case K_MASKED: {
        /* the leading digits masked, the last one or two shown, or all */
        int shown = (int)vat_rng_range(r, 0, 2);
        for (int i = 0; i < nd - shown; i++)
            dig[i] = 'X';
        break;
    }
    case K_NEAR_PREFIX: {
        /* one near prefix per letter: the n-th changes letter n % len */
        size_t at = slot->seen % plen;
        char was = pre[at], now;
        do
            now = (char)('A' + vat_rng_below(r, 26));
        while (now == was);
        pre[at] = now;
        if (x->any_case && vat_rng_chance(r, 0.3))
            for (size_t i = 0; i < plen; i++)
                pre[i] = (char)(pre[i] - 'A' + 'a');
        break;
    }
    case K_SEP_PADDED: {
        /* The separator typed twice (the first of a set), or with a space
         * on one or both sides; a shape without a separator takes '-'.
         * Caught: a separator written leniently, ORD-+\d{6} or
         * ORD\s*-\s*\d{6}, which takes ORD--123456 and ORD - 123456. */
        char s = x->sep ? x->sep : '-';
        static const char *const spaced[] = {" @ ", " @", "@ "};
        const char *form = slot->seen == 0 ? "@@" : VAT_PICK(r, spaced);
        size_t k = 0;
        for (const char *p = form; *p; p++)
            sepbuf[k++] = *p == '@' ? s : *p;
        sepbuf[k] = 0;
        break;
    }
    case K_DIGITS_SPLIT: {
        /* The digits typed in two chunks, as people type long numbers:
         * ORD-123 456, ORD-123-456.  The first chunk (half the digits,
         * rounded down) is shorter than the fewest digits a shape takes,
         * so no part of it is an id.  Caught: digits that let a chunk
         * separator in, ORD-(?:\d[ -]?){5}\d or ORD-[\d ]{6,7}. */
        static const char chunk[] = {' ', ' ', '-'};
        int cut = nd / 2;
        char c = chunk[vat_rng_below(r, sizeof chunk)];
        memmove(dig + cut + 1, dig + cut, (size_t)(nd - cut) + 1);
        dig[cut] = c;
        break;
    }
    case K_TARGET:
    case K_GLUED_BEFORE:
    case K_GLUED_AFTER:
    case K_PUNCT:
    case N_KINDS:
        break;
    }
    if (kind == K_SEP_PADDED)
        snprintf(id, sizeof id, "%s%s%s", pre, sepbuf, dig);
    else
        render(id, sizeof id, pre, sep, dig);

    switch ((enum kind)kind) {
    case K_TARGET:
        vat_rx_target(b, id, kind);
        return;
    case K_CASE:
        if (x->any_case)
            vat_rx_target(b, id, kind);
        else
            vat_rx_decoy(b, id, kind);
        return;
    case K_PUNCT: {
        static const char *const wraps[][2] = {{"(", ")"}, {"[", "]"},  {"\"", "\""},
                                              {"#", ":"}, {"<", ">."}, {"'", "',"}};
        size_t w = vat_rng_below(r, 6);
        vat_rx_put(b, wraps[w][0]);
        vat_rx_target(b, id, kind);
        vat_rx_put(b, wraps[w][1]);
        return;
    }
    case K_GLUED_BEFORE: {
        static const char *const glue[] = {"X", "RE", "SUB", "ref_", "2", "id", "_"};
        snprintf(out, sizeof out, "%s%s", VAT_PICK(r, glue), id);
        vat_rx_decoy(b, out, kind);
        return;
    }
    case K_GLUED_AFTER: {
        static const char *const glue[] = {"X", "A", "b", "_2", "_old", "x"};
        snprintf(out, sizeof out, "%s%s", id, VAT_PICK(r, glue));
        vat_rx_decoy(b, out, kind);
        return;
    }
    default:
        vat_rx_decoy(b, id, kind);
        return;
    }
}

/* Support-message frames by number of slots.  Every slot is bordered by
 * a space, punctuation or a line edge, never by a letter, digit or
 * underscore, so a plant touches its neighbours only where it is glued on
 * purpose. */
static const char *const frames0[] = {
    "{user}: still waiting on a reply about my refund since {time}",
    "{level} [{svc}] ticket {id} escalated after {ms}",
    "{user}: thanks, that fixed it ({time})",
    "note from {user} at {time}: customer called twice, no reference given",
};
static const char *const frames1[] = {
    "{user}: hi, my order {slot} arrived damaged",
    "{slot} marked as shipped by {user} at {time}",
    "{user}: can you check the status of {slot}?",
    "ticket note: customer quoted {slot}, asked for a call back",
    "[{svc}] refund approved for {slot}",
    "{user}: order number is {slot}",
    "{time} {level} {svc}: address change requested on {slot} from {ip}",
};
static const char *const frames2[] = {
    "{user}: I have two orders, {slot} and {slot}, both late",
    "merge {slot} into {slot} (requested by {user})",
    "{slot}: split shipment, see also {slot}.",
    "{user}: was charged for {slot} but received {slot} instead",
};
static const char *const frames3[] = {
    "{user}: ({slot}, {slot}, {slot}) all show pending",
    "bulk cancel: {slot};{slot};{slot} by {user}",
    "{slot} / {slot} / {slot} - reship approved by {user}",
};

/* Of 20 lines, 2 hold no id slot, 9 one, 6 two and 3 three. */
static const struct vat_rx_layout layout = {
    VAT_RX_FRAMES(frames0, frames1, frames2, frames3),
    .slot_weights = {2, 9, 6, 3},
    .weights = kind_weights,
    .n_kinds = N_KINDS,
    .plant = plant,
};

/* ---- the task ------------------------------------------------------------ */

/* The data sentence and the question in both styles. */
static const char *const d_explicit[] = {
    "[[The lines below are|Below are|You are given|The example lines are|These lines are]] "
    "[[customer support messages and ticket notes|support messages and ticket notes|ticket "
    "notes and support messages]][[:|; they mention| with]] [[order ids|order "
    "identifiers]], [[request ids|request references]], [[times|timestamps]], names and "
    "[[other references|other codes]].",
};
static const char *const d_natural[] = {
    "[[These are messages from our support inbox and agents' ticket notes|Here are some "
    "support messages and ticket notes|Below: a sample of customer messages and internal "
    "ticket notes|I copied these lines from support tickets|The help desk exported these "
    "lines]][[; they mention|, with|: they quote]] order numbers [[among|next to|along with]] "
    "[[request ids|other references]], [[times|timestamps]] and names.",
};
static const char *const q_natural[] = {
    "Our order numbers look like {shape} (N is a digit){case}. Could you write a regex that "
    "pulls every order number out of lines like these?",
    "I need a regular expression that picks out our order numbers, which are written {shape} "
    "(each N a digit){case}.",
    "Can you give me a regex to extract the order numbers? They have the form {shape}, N being "
    "a digit{case}.",
    "Please write a regex that finds every order number in such lines; an order number is "
    "{shape} with N a digit{case}.",
    "[[For the ticket tagger|For our order lookup bot|For the support dashboard]] I need a "
    "regex for order numbers, written {shape} (N a digit){case}.",
};
static const char *const giveaways[] = {
    "stands on its own", "not extracted at all", "not even in part", "does not count",
    "do not count", "right before", "right after", "word boundar", "underscore", NULL,
};
/* The decoys, which a natural prompt never describes. */
static const char *const defects[] = {
    "masked", "too many digits", "typo", "agents type", "mistyped", NULL,
};
static const char *const answer_columns[] = {NULL};
static const char *const states_case[] = {"always in capitals", "upper or lower case", NULL};
static const char *const states_shape[] = {"{}", NULL};
static const struct vat_convention conventions[] = {
    {"case", states_case},
    {"shape", states_shape},
    {NULL, NULL},
};

static void prompt_rules(struct vat_buf *b, struct vat_task *t, const struct fmt *x)
{
    char shape[32];
    fmt_shape(x, shape);
    char lower[8], capital[8];
    size_t plen = strlen(x->prefix);
    for (size_t i = 0; i <= plen; i++) {
        char ch = x->prefix[i];
        lower[i] = ch ? (char)(ch - 'A' + 'a') : 0;
        capital[i] = i == 0 ? ch : lower[i];
    }
    if (vat_prompt_natural(t)) {
        char *cs = vat_prompt_text(
            t, 'c',
            x->any_case ? "[[; the prefix counts in upper or lower case|; upper or lower case "
                          "both count for the prefix]]"
                        : "[[; the prefix is always in capitals|; we write the prefix always "
                          "in capitals]]",
            NULL);
        char opt_cs[200];
        snprintf(opt_cs, sizeof opt_cs, "%s%s",
                 x->digits_max > x->digits ? "; a digit shown as (N) may be absent" : "", cs);
        free(cs);
        const char *kv[] = {"shape", shape, "case", opt_cs, NULL};
        VAT_RX_PROMPT_ASK(b, t, d_natural, q_natural, kv);
        return;
    }
    const char *opt = x->digits_max > x->digits ? ", each (N) a digit that may be absent" : "";
    char tail[128];
    snprintf(tail, sizeof tail, "of the shape %s (each N a digit%s)", shape, opt);
    VAT_RX_PROMPT_QUESTION(b, t, d_explicit, "order id", "order ids", tail);
    char sep[2] = {x->sep, 0}, d[12], d0[12], d1[12], dm[12], dm1[12];
    snprintf(d, sizeof d, "%d", x->digits);
    snprintf(d0, sizeof d0, "%d", x->digits - 1);
    snprintf(d1, sizeof d1, "%d", x->digits + 1);
    snprintf(dm, sizeof dm, "%d", x->digits_max);
    snprintf(dm1, sizeof dm1, "%d", x->digits_max + 1);
    const char *kv[] = {"p", x->prefix, "lo", lower, "cap", capital, "sep", sep, "d", d,
                        "d0", d0, "d1", d1, "dm", dm, "dm1", dm1, NULL};
    if (x->any_case)
        vat_prompt_say(b, t, 'r',
                       "- [[it starts with|it begins with|first comes]] the prefix \"{p}\" in "
                       "any mix of upper and lower case (\"{p}\", \"{lo}\" and \"{cap}\" "
                       "[[all count|are all fine]]);\n",
                       kv);
    else
        vat_prompt_say(b, t, 'r',
                       "- [[it starts with|it begins with|first comes]] the prefix \"{p}\" [[in "
                       "capital letters exactly|exactly in capital letters|in capitals "
                       "exactly]] (\"{lo}\" or \"{cap}\" does not count);\n",
                       kv);
    if (x->sep)
        vat_prompt_say(b, t, 'r',
                       "- [[then comes|next comes|after it comes]] the separator \"{sep}\" "
                       "([[any other separator, a space or none does not count|another "
                       "separator, a space or none does not count|a space, no separator or "
                       "another one does not count]]);\n",
                       kv);
    else
        vat_prompt_say(b, t, 'r',
                       "- the digits [[follow the prefix directly|come right after the "
                       "prefix]], with no separator (a \"-\", \"_\", space or other "
                       "character in between does not count);\n",
                       kv);
    if (x->digits_max > x->digits)
        vat_prompt_say(b, t, 'r',
                       "- [[then come|next come|after that come]] {d} to {dm} digits ([[{d0} or "
                       "{dm1} digits do not count, nor do ids with some digits masked by "
                       "letters|not {d0} or {dm1}, and no digit masked by a letter|{d0} or "
                       "{dm1} digits, or a digit masked by a letter, do not count]]);\n",
                       kv);
    else
        vat_prompt_say(b, t, 'r',
                       "- [[then come|next come|after that come]] exactly {d} digits ([[{d0} or "
                       "{d1} digits do not count, nor do ids with some digits masked by "
                       "letters|not {d0} or {d1}, and no digit masked by a letter|{d0} or {d1} "
                       "digits, or a digit masked by a letter, do not count]]);\n",
                       kv);
    vat_prompt_say(b, t, 'r',
                   "- [[it stands on its own|it is a token of its own|it stands alone]]: [[the "
                   "character right before the prefix and the character right after the last "
                   "digit|the characters just before the prefix and just after the last "
                   "digit]], [[where there is one|if any]], [[are not a letter, a digit or an "
                   "underscore|are neither letters nor digits nor underscores]] ([[spaces, "
                   "punctuation and the start or end of the line are fine|a space, punctuation "
                   "or either end of the line is fine]]).\n"
                   "[[An id that breaks any of these rules|An id breaking any rule above|Any "
                   "id that breaks a rule]] is not extracted at all, not even in part.\n\n",
                   kv);
}

static int generate(struct vat_task *t, struct vat_rng *rng, struct vat_err *e)
{
    struct fmt x = fmt_from_index(vat_rx_choose_format(t, rng, N_FORMATS));
    struct vat_rx_draw d;
    if (vat_rx_task_begin(t, rng, &d, e) != 0)
        return -1;

    /* Required plants.  The examples show the boundary rule the trap
     * breaks, the digit count and the case rule; the held-out lines hold
     * every kind, and one near prefix per prefix letter, so that each
     * part of the gold pattern is needed on the hidden lines alone. */
    vat_rx_require(&d.ex, K_TARGET);
    vat_rx_require(&d.ex, K_TARGET);
    vat_rx_require(&d.ex, K_CASE);
    vat_rx_require(&d.ex, vat_rng_chance(rng, 0.5) ? K_GLUED_BEFORE : K_GLUED_AFTER);
    vat_rx_require(&d.ex, vat_rng_chance(rng, 0.5) ? K_LONG : K_SHORT);
    vat_rx_require(&d.ex, vat_rng_chance(rng, 0.5) ? K_OTHER_SEP : K_MASKED);
    for (int k = 0; k < 3; k++)
        vat_rx_require(&d.ho, K_TARGET);
    vat_rx_require(&d.ho, K_GLUED_BEFORE);
    for (int k = K_CASE; k < FIRST_HELD_BACK; k++)
        if (k != K_NEAR_PREFIX)
            vat_rx_require(&d.ho, k);
    for (size_t k = 0; k < strlen(x.prefix); k++)
        vat_rx_require(&d.ho, K_NEAR_PREFIX);
    /* From level 3 on, the held-out lines also hold the kinds held back
     * (never shown in the examples): a doubled and a spaced separator,
     * and digits typed in chunks. */
    if (vat_task_level(t) >= VAT_RX_HELD_BACK_LEVEL) {
        vat_rx_require(&d.ho, K_SEP_PADDED);
        vat_rx_require(&d.ho, K_SEP_PADDED);
        vat_rx_require(&d.ho, K_DIGITS_SPLIT);
    }
    if (vat_rx_task_plant(t, rng, &d, &layout, &x, e) != 0)
        return -1;

    char shape[32];
    fmt_shape(&x, shape);
    t->params = json_object();
    json_object_set_new(t->params, "shape", json_string(shape));
    json_object_set_new(t->params, "prefix", json_string(x.prefix));
    json_object_set_new(t->params, "separator", json_stringn(&x.sep, x.sep ? 1 : 0));
    json_object_set_new(t->params, "digits", json_integer(x.digits));
    json_object_set_new(t->params, "digits_max", json_integer(x.digits_max));
    json_object_set_new(t->params, "case", json_string(x.any_case ? "any" : "exact"));

    struct vat_buf b = VAT_BUF_INIT;
    prompt_rules(&b, t, &x);
    vat_rx_task_prompt(t, &b, "messages");
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

const struct vat_template vat_tmpl_regex_order_ids = {
    .version = VAT_TEMPLATE_V1,
    .name = "regex_order_ids",
    .family = "regex",
    .answer_kind = "regex",
    .trap = "The id shape without word boundaries, such as ORD-\\d{6}, which also takes ids "
            "glued to letters or digits (XORD-123456, ORD-1234567, ORD-123456X).",
    .summary = "Extract the standalone order ids of one drawn shape (prefix, separator, digit "
               "count, case rule) from support messages.",
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
