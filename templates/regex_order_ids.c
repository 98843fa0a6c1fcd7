/* regex_order_ids.c — the regex template "regex_order_ids": from support
 * messages and ticket notes, extract the order ids of one drawn shape
 * (prefix, separator, digit count, whether the prefix's case matters) that
 * stand as tokens of their own.  The trap is the same shape without word
 * boundaries, armed by planted decoys (XORD-123456, ORD-1234567,
 * ORD-123456X) in every line set; the other decoys (short and masked ids,
 * other separators, other cases, near prefixes) make each part of the gold
 * pattern matter on the held-out lines.  Exports vat_tmpl_regex_order_ids. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "regexgen.h"
#include "template.h"

/* ---- the shape space ----------------------------------------------------- */

/* Upper-case letters only: the near-prefix and case decoys rely on it.
 * None is a prefix of the {id} filler (REQ, JOB, TX, SES). */
static const char *const prefixes[] = {"ORD", "PO", "SO", "RMA", "WO", "ORDR", "CO", "SHP"};
#define N_PREFIXES 8
/* 0 is "no separator". */
static const char seps[] = {'-', '_', '#', 0};
#define N_SEPS 4
#define DIGITS_MIN 5
#define N_DIGITS 4
#define N_FORMATS (N_PREFIXES * N_SEPS * N_DIGITS * 2)
#define MAX_PREFIX 4

struct fmt {
    const char *prefix;
    char sep;      /* 0: the digits follow the prefix directly     */
    int digits;    /* DIGITS_MIN .. DIGITS_MIN + N_DIGITS - 1       */
    bool any_case; /* the prefix counts in any mix of upper/lower   */
};

static struct fmt fmt_from_index(unsigned f)
{
    struct fmt x = {prefixes[f % N_PREFIXES], seps[(f / N_PREFIXES) % N_SEPS],
                    DIGITS_MIN + (int)((f / (N_PREFIXES * N_SEPS)) % N_DIGITS),
                    f / (N_PREFIXES * N_SEPS * N_DIGITS) != 0};
    return x;
}

/* "ORD-NNNNNN" for the prompt and params. */
static void fmt_shape(const struct fmt *x, char out[24])
{
    int k = snprintf(out, 24, "%s", x->prefix);
    if (x->sep)
        out[k++] = x->sep;
    for (int i = 0; i < x->digits; i++)
        out[k++] = 'N';
    out[k] = 0;
}

/* Builds the pattern: gold with word boundaries, or the trap without.
 * An any-case prefix is spelled letter by letter as [Oo][Rr][Dd], the
 * form that needs no flags.  Returns a new string. */
static char *build_pattern(const struct fmt *x, bool naive)
{
    struct vat_buf b = VAT_BUF_INIT;
    if (!naive)
        vat_buf_puts(&b, "\\b");
    for (const char *p = x->prefix; *p; p++) {
        if (x->any_case)
            vat_buf_printf(&b, "[%c%c]", *p, *p - 'A' + 'a');
        else
            vat_buf_putc(&b, *p);
    }
    if (x->sep)
        vat_buf_putc(&b, x->sep);
    vat_buf_printf(&b, "\\d{%d}", x->digits);
    if (!naive)
        vat_buf_puts(&b, "\\b");
    return vat_buf_detach(&b);
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
    if (strcmp(cs, "exact") != 0 && strcmp(cs, "any") != 0)
        return vat_err_set(e, "regex_order_ids: unknown case rule '%s'", cs);
    x->any_case = strcmp(cs, "any") == 0;
    return 0;
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
    N_KINDS
};

static const unsigned kind_weights[N_KINDS] = {
    [K_TARGET] = 36,     [K_CASE] = 6,    [K_GLUED_BEFORE] = 6, [K_GLUED_AFTER] = 6,
    [K_LONG] = 6,        [K_SHORT] = 6,   [K_OTHER_SEP] = 7,    [K_MASKED] = 4,
    [K_NEAR_PREFIX] = 6, [K_PUNCT] = 10,
};

struct plant_ctx {
    const struct fmt *fmt;
    const int *plan;
    size_t next;
    unsigned near; /* near-prefix plants so far: the next changes letter near % len */
    unsigned off;  /* digit-count plants so far: the first long and short are off by one */
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

static void plant(struct vat_rx_builder *b, struct vat_rng *r, void *vctx)
{
    struct plant_ctx *c = vctx;
    const struct fmt *x = c->fmt;
    int kind = c->plan[c->next++];
    char pre[8], dig[16], id[48], out[64];
    snprintf(pre, sizeof pre, "%s", x->prefix);
    size_t plen = strlen(pre);
    int nd = x->digits;
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
        unsigned bit = kind == K_LONG ? 1u : 2u;
        int by = c->off & bit ? (int)vat_rng_range(r, 1, kind == K_LONG ? 3 : 2) : 1;
        c->off |= bit;
        nd += kind == K_LONG ? by : -by;
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
        size_t at = c->near++ % plen;
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
    case K_TARGET:
    case K_GLUED_BEFORE:
    case K_GLUED_AFTER:
    case K_PUNCT:
    case N_KINDS:
        break;
    }
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

static const char *pick_frame(struct vat_rng *r, int slots)
{
    switch (slots) {
    case 0: return VAT_PICK(r, frames0);
    case 1: return VAT_PICK(r, frames1);
    case 2: return VAT_PICK(r, frames2);
    default: return VAT_PICK(r, frames3);
    }
}

/* Builds n lines into s: frames first, then the slot plan over all their
 * slots (required kinds guaranteed), then the text. */
static int build_lines(struct vat_rx_set *s, struct vat_rng *r, size_t n, const struct fmt *x,
                       const int *required, size_t nreq, struct vat_err *e)
{
    int *slots = vat_xcalloc(n, sizeof *slots);
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned u = vat_rng_below(r, 20);
        slots[i] = u < 2 ? 0 : u < 11 ? 1 : u < 17 ? 2 : 3;
        total += (size_t)slots[i];
    }
    /* Too few slots for the required plants: widen lines, starting at a
     * random one, until they fit (n * 3 >= nreq is checked by the caller). */
    size_t at = vat_rng_below(r, (uint32_t)n);
    while (total < nreq) {
        if (slots[at] < 3) {
            slots[at]++;
            total++;
        }
        at = (at + 1) % n;
    }
    const char **frame = vat_xcalloc(n, sizeof *frame);
    for (size_t i = 0; i < n; i++)
        frame[i] = pick_frame(r, slots[i]);

    int *plan = vat_rx_plan(r, total, required, nreq, kind_weights, N_KINDS);
    struct plant_ctx ctx = {x, plan, 0, 0, 0};
    struct vat_rx_builder b;
    vat_rx_begin(&b);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (vat_rx_expand(&b, r, frame[i], plant, &ctx, e) < 0)
            rc = -1;
        else
            vat_rx_finish(&b, s);
    }
    vat_rx_builder_release(&b);
    free(plan);
    free(frame);
    free(slots);
    return rc;
}

/* Returns true if no line of ex or ho repeats another: a held-out line
 * equal to an example line would be shown in the prompt. */
static bool lines_distinct(const struct vat_rx_set *ex, const struct vat_rx_set *ho)
{
    size_t n = ex->n + ho->n;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            const char *a = i < ex->n ? ex->line[i].text : ho->line[i - ex->n].text;
            const char *b = j < ex->n ? ex->line[j].text : ho->line[j - ex->n].text;
            if (strcmp(a, b) == 0)
                return false;
        }
    return true;
}

/* ---- the task ------------------------------------------------------------ */

struct priv {
    struct vat_rx_set ex, ho; /* the planted lines and their expected lists */
};

static void priv_free(void *p)
{
    struct priv *q = p;
    vat_rx_set_release(&q->ex);
    vat_rx_set_release(&q->ho);
    free(q);
}

/* The shape of a task.  The first draw walks a permutation of all shapes
 * derived from (master seed, template, index / N_FORMATS), so any
 * N_FORMATS consecutive tasks share no gold pattern; a redraw draws afresh
 * from the task stream. */
static struct fmt choose_fmt(const struct vat_task *t, struct vat_rng *r)
{
    if (t->attempt > 0)
        return fmt_from_index(vat_rng_below(r, N_FORMATS));
    struct vat_rng pr;
    vat_rng_stream(&pr, t->master_seed, t->tmpl->name, t->index / N_FORMATS, "formats", 0, NULL);
    unsigned perm[N_FORMATS];
    for (unsigned i = 0; i < N_FORMATS; i++)
        perm[i] = i;
    vat_rng_shuffle(&pr, perm, N_FORMATS, sizeof perm[0]);
    return fmt_from_index(perm[t->index % N_FORMATS]);
}

static const struct vat_param params[] = {
    {"examples_min", VAT_PARAM_INT, 3, NULL, 3, 8, "fewest example lines shown in the prompt"},
    {"examples_max", VAT_PARAM_INT, 5, NULL, 3, 8, "most example lines shown in the prompt"},
    {"rows_min", VAT_PARAM_INT, 24, NULL, 20, 500, "fewest held-out lines"},
    {"rows_max", VAT_PARAM_INT, 32, NULL, 20, 500, "most held-out lines"},
    {NULL, VAT_PARAM_INT, 0, NULL, 0, 0, NULL},
};

static void prompt_rules(struct vat_buf *b, const struct fmt *x)
{
    char shape[24];
    fmt_shape(x, shape);
    char lower[8], capital[8];
    size_t plen = strlen(x->prefix);
    for (size_t i = 0; i <= plen; i++) {
        char ch = x->prefix[i];
        lower[i] = ch ? (char)(ch - 'A' + 'a') : 0;
        capital[i] = i == 0 ? ch : lower[i];
    }
    vat_buf_puts(b, "The lines below are customer support messages and ticket notes: they "
                    "mention order ids, request ids, times, names and other references.\n\n");
    vat_buf_printf(b,
                   "Write a regular expression that extracts every order id of the shape %s "
                   "(each N a digit). "
                   "A piece of text is such an order id only when all of these hold:\n",
                   shape);
    if (x->any_case)
        vat_buf_printf(b, "- it starts with the prefix \"%s\" in any mix of upper and lower "
                          "case (\"%s\", \"%s\" and \"%s\" all count);\n",
                       x->prefix, x->prefix, lower, capital);
    else
        vat_buf_printf(b, "- it starts with the prefix \"%s\" in capital letters exactly "
                          "(\"%s\" or \"%s\" does not count);\n",
                       x->prefix, lower, capital);
    if (x->sep)
        vat_buf_printf(b, "- then comes the separator \"%c\" (any other separator, a space or "
                          "none does not count);\n",
                       x->sep);
    else
        vat_buf_puts(b, "- the digits follow the prefix directly, with no separator (a \"-\", "
                        "\"_\", space or other character in between does not count);\n");
    vat_buf_printf(b,
                   "- then come exactly %d digits (%d or %d digits do not count, nor do ids "
                   "with some digits masked by letters);\n"
                   "- it stands on its own: the character right before the prefix and the "
                   "character right after the last digit, where there is one, are not a "
                   "letter, a digit or an underscore (spaces, punctuation and the start or "
                   "end of the line are fine).\n"
                   "An id that breaks any of these rules is not extracted at all, not even in "
                   "part.\n\n",
                   x->digits, x->digits - 1, x->digits + 1);
}

static int generate(struct vat_task *t, struct vat_rng *rng, struct vat_err *e)
{
    long exmin = vat_task_int(t, "examples_min"), exmax = vat_task_int(t, "examples_max");
    long homin = vat_task_int(t, "rows_min"), homax = vat_task_int(t, "rows_max");
    if (exmin < 3 || exmax < exmin || homin < 20 || homax < homin)
        return vat_err_set(e, "regex_order_ids: need 3 <= examples_min <= examples_max and "
                              "20 <= rows_min <= rows_max");
    struct fmt x = choose_fmt(t, rng);
    size_t nex = (size_t)vat_rng_range(rng, exmin, exmax);

    /* The held-out lines come from their own stream, so the shown examples
     * and the hidden lines are independent draws. */
    struct vat_rng hr;
    vat_rng_stream(&hr, t->master_seed, t->tmpl->name, t->index, "heldout", t->attempt, NULL);
    size_t nho = (size_t)vat_rng_range(&hr, homin, homax);

    /* Required plants.  The examples show the boundary rule the trap
     * breaks, the digit count and the case rule; the held-out lines hold
     * every kind, and one near prefix per prefix letter, so that each
     * part of the gold pattern is needed on the hidden lines alone. */
    int req_ex[8], req_ho[N_KINDS + MAX_PREFIX + 4];
    size_t nreq_ex = 0, nreq_ho = 0;
    req_ex[nreq_ex++] = K_TARGET;
    req_ex[nreq_ex++] = K_TARGET;
    req_ex[nreq_ex++] = K_CASE;
    req_ex[nreq_ex++] = vat_rng_chance(rng, 0.5) ? K_GLUED_BEFORE : K_GLUED_AFTER;
    req_ex[nreq_ex++] = vat_rng_chance(rng, 0.5) ? K_LONG : K_SHORT;
    req_ex[nreq_ex++] = vat_rng_chance(rng, 0.5) ? K_OTHER_SEP : K_MASKED;
    for (int k = 0; k < 3; k++)
        req_ho[nreq_ho++] = K_TARGET;
    req_ho[nreq_ho++] = K_GLUED_BEFORE;
    for (int k = K_CASE; k < N_KINDS; k++)
        if (k != K_NEAR_PREFIX)
            req_ho[nreq_ho++] = k;
    for (size_t k = 0; k < strlen(x.prefix); k++)
        req_ho[nreq_ho++] = K_NEAR_PREFIX;
    if (nex * 3 < nreq_ex || nho * 3 < nreq_ho)
        return vat_err_set(e, "regex_order_ids: too few lines for the required plants");

    struct priv *p = vat_xcalloc(1, sizeof *p);
    t->priv = p;
    t->priv_free = priv_free;
    if (build_lines(&p->ex, rng, nex, &x, req_ex, nreq_ex, e) != 0 ||
        build_lines(&p->ho, &hr, nho, &x, req_ho, nreq_ho, e) != 0)
        return -1;
    unsigned need = 0;
    for (size_t i = 0; i < nreq_ho; i++)
        need |= 1u << req_ho[i];
    if ((vat_rx_set_kinds(&p->ho) & need) != need)
        return vat_err_set(e, "%s: the held-out lines lack a required decoy kind", t->id);
    if (!lines_distinct(&p->ex, &p->ho))
        return vat_err_set(e, "%s: a line repeats another line", t->id);

    char *rel = vat_task_fixture_relpath(t, ".csv");
    char *hrel = vat_task_fixture_relpath(t, ".heldout.csv");
    int rc = -1;
    if (vat_rx_write_lines(&p->ex, VAT_RX_EXAMPLE_PREFIX, t->root, rel, e) != 0 ||
        vat_rx_write_lines(&p->ho, VAT_RX_HELDOUT_PREFIX, t->root, hrel, e) != 0)
        goto out;
    vat_rx_add_fixture(t, rel, "main", p->ex.n);
    vat_rx_add_fixture(t, hrel, "variant", p->ho.n);

    char shape[24];
    fmt_shape(&x, shape);
    t->params = json_object();
    json_object_set_new(t->params, "shape", json_string(shape));
    json_object_set_new(t->params, "prefix", json_string(x.prefix));
    json_object_set_new(t->params, "separator", json_stringn(&x.sep, x.sep ? 1 : 0));
    json_object_set_new(t->params, "digits", json_integer(x.digits));
    json_object_set_new(t->params, "case", json_string(x.any_case ? "any" : "exact"));
    json_object_set_new(t->params, "examples", json_integer((json_int_t)p->ex.n));
    json_object_set_new(t->params, "heldout_lines", json_integer((json_int_t)p->ho.n));
    t->difficulty = 2 + x.any_case + (x.sep == 0) + (x.digits != 6);

    struct vat_buf b = VAT_BUF_INIT;
    prompt_rules(&b, &x);
    vat_rx_prompt_examples(&b, &p->ex, rel, t->inline_max_bytes);
    vat_rx_prompt_answer(&b, p->ho.n, "messages");
    t->prompt = vat_buf_detach(&b);
    t->spec = vat_rx_spec_new();
    rc = 0;
out:
    free(rel);
    free(hrel);
    return rc;
}

static int reference(struct vat_task *t, struct vat_err *e)
{
    struct fmt x;
    if (t->n_fixtures != 2)
        return vat_err_set(e, "%s: expected the example and held-out fixtures", t->id);
    if (fmt_from_params(t->params, &x, e) != 0)
        return -1;
    struct vat_rx_set ex = VAT_RX_SET_INIT, ho = VAT_RX_SET_INIT;
    char *gold = build_pattern(&x, false);
    int rc = -1;
    if (vat_rx_read_lines(&ex, t->root, t->fixture[0].path, e) == 0 &&
        vat_rx_read_lines(&ho, t->root, t->fixture[1].path, e) == 0 &&
        vat_rx_spec_cases(t->spec, gold, &ex, &ho, e) == 0) {
        t->gold = gold;
        gold = NULL;
        rc = 0;
    }
    free(gold);
    vat_rx_set_release(&ex);
    vat_rx_set_release(&ho);
    return rc;
}

static int confirm(const struct vat_task *t, struct vat_err *e)
{
    const struct priv *p = t->priv;
    if (!p)
        return vat_err_set(e, "%s: no planted truth to confirm against", t->id);
    struct vat_err sub;
    if (vat_rx_cases_agree(t->spec, &p->ex, &p->ho, &sub) != 0)
        return vat_err_set(e, "%s: %s", t->id, sub.msg);
    return 0;
}

static int trap_answer(struct vat_task *t, struct vat_err *e)
{
    struct fmt x;
    if (fmt_from_params(t->params, &x, e) != 0)
        return -1;
    const struct priv *p = t->priv;
    char *trap = build_pattern(&x, true);
    /* Armed on the held-out lines alone: the examples show glued ids, the
     * hidden lines must catch the mistake on their own too. */
    int misses = p ? vat_rx_count_misses(t->spec, trap, &p->ho, e) : 0;
    if (misses <= 0) {
        free(trap);
        return misses < 0 ? -1 : vat_err_set(e, "%s: the trap is not armed on held-out lines",
                                             t->id);
    }
    t->trap = trap;
    return 0;
}

const struct vat_template vat_tmpl_regex_order_ids = {
    .version = VAT_TEMPLATE_V1,
    .name = "regex_order_ids",
    .family = "regex",
    .answer_kind = "regex",
    .trap = "the id shape without word boundaries, such as ORD-\\d{6}, which also takes ids "
            "glued to letters or digits (XORD-123456, ORD-1234567, ORD-123456X)",
    .summary = "extract the standalone order ids of one drawn shape (prefix, separator, digit "
               "count, case rule) from support messages",
    .params = params,
    .default_count = 12,
    .generate = generate,
    .reference = reference,
    .confirm = confirm,
    .trap_answer = trap_answer,
    .check = vat_check_task,
};
