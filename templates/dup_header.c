/* dup_header.c — the dup_header probe: a CSV whose header names one column
 * more than once, in one of three shapes chosen by task index (so every
 * shape appears in any corpus of three tasks or more):
 *   grouped  a two-line header, group names (`Budget,Budget,Actual,Actual`,
 *            or merged-cell style `Budget,,Actual,`) over column names
 *            (`amount,count,amount,count`);
 *   flat     one header line with two or three columns of the same name,
 *            told apart by unit or by position in the prompt;
 *   titled   the flat table below title and note lines, as spreadsheets
 *            export it; a note says which same-named column is which.
 * The question asks for the total of one of the same-named columns that
 * is not the first, per key (an object) or for one key (a number).  The
 * trap reads the first column of that name, which is what a reader keyed
 * by name (pandas' df['amount']) returns.  confirm reads the file by the
 * column positions the generator planted, without any header logic.
 * Exports vat_tmpl_dup_header. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analytics.h"
#include "csvio.h"
#include "jsonout.h"
#include "prompt.h"
#include "template.h"
#include "values.h"
#include "xlsxlay.h"

#define DH_REL_TOL 1e-9
#define DH_ABS_TOL 1e-6
#define DH_MAX_KEYS 8
#define DH_MAX_COPIES 3

enum dh_shape { S_GROUPED, S_FLAT, S_TITLED, DH_NSHAPES };
static const char *const dh_shape_name[DH_NSHAPES] = {"grouped", "flat", "titled"};

/* A flat table with one column name repeated. */
struct dh_flat {
    const char *topic;   /* "shipments, one shipment per row" */
    const char *title;   /* the report title of the titled shape */
    const char *id_col, *id_prefix;
    const char *key_col, *key_list, *date_col;
    const char *name;    /* the repeated column name */
    int copies;
    const char *doc[DH_MAX_COPIES]; /* what each copy holds, in order */
    const char *ask[DH_MAX_COPIES]; /* the question's plural for each copy */
    bool by_unit;        /* told apart by unit (else by position)    */
};

enum { F_SHIP, F_ORDERS, F_TICKETS, F_CLAIMS, DH_NFLAT };
static const struct dh_flat dh_flats[DH_NFLAT] = {
    {"shipments, one shipment per row", "Shipments by carrier", "shipment_id", "SHP-", "carrier",
     "carrier", "shipped_on", "weight", 2,
     {"the weight in pounds (lb)", "the weight in kilograms (kg)"},
     {"weights in pounds", "weights in kilograms"}, true},
    {"orders, one order per row", "Order totals by region", "order_id", "ORD-", "region",
     "region", "ordered_on", "total", 2,
     {"the order total in US dollars (USD)", "the order total in euros (EUR)"},
     {"order totals in US dollars", "order totals in euros"}, true},
    {"support tickets, one ticket per row", "Support ticket times", "ticket_id", "TCK-", "team",
     "team", "opened_on", "hours", 3,
     {"the hours to first response", "the hours to resolution",
      "the hours agents spent working on the ticket"},
     {"hours to first response", "hours to resolution", "hours agents spent on the tickets"},
     false},
    {"expense claims, one claim per row", "Expense claims by category", "claim_id", "EXP-",
     "category", "category", "submitted_on", "amount", 3,
     {"the net amount", "the tax on it", "the gross amount (net plus tax)"},
     {"net amounts", "taxes", "gross amounts"}, false},
};

/* A report with a two-line header: groups over the same pair of columns. */
struct dh_grouped {
    const char *topic;
    const char *key_col, *key_list;
    const char *groups[3];  /* two-group reports use the first and last */
    const char *measure[2]; /* money, then a count                      */
    const char *doc[2];
};

enum { G_BUDGET, G_SALES, G_CHANNEL, DH_NGROUPED };
static const struct dh_grouped dh_groupeds[DH_NGROUPED] = {
    {"a monthly expense report by category", "category", "category",
     {"Budget", "Forecast", "Actual"}, {"amount", "count"},
     {"the money spent or planned", "the number of purchases"}},
    {"a monthly sales report by region", "region", "region", {"Target", "Forecast", "Actual"},
     {"revenue", "orders"}, {"the revenue", "the number of orders"}},
    {"a monthly sales report by product and channel", "product", "product",
     {"Online", "Marketplace", "In store"}, {"sales", "units"},
     {"the sales in money", "the number of units sold"}},
};

static const struct vat_param dh_params[] = {
    {.name = "rows_min", .type = VAT_PARAM_INT, .def = 12, .min = 4, .max = 2000,
     .doc = "fewest data rows in a fixture", .role = VAT_PARAM_ROWS},
    {.name = "rows_max", .type = VAT_PARAM_INT, .def = 48, .min = 4, .max = 2000,
     .doc = "most data rows in a fixture", .role = VAT_PARAM_ROWS},
    {.name = "keys_min", .type = VAT_PARAM_INT, .def = 3, .min = 2, .max = DH_MAX_KEYS,
     .doc = "fewest distinct keys (carriers, regions, ...)"},
    {.name = "keys_max", .type = VAT_PARAM_INT, .def = 5, .min = 2, .max = DH_MAX_KEYS,
     .doc = "most distinct keys"},
    {.name = "one_key_chance", .type = VAT_PARAM_REAL, .def = 0.4, .min = 0, .max = 1,
     .doc = "chance that the question asks for one key's total (a number) instead of every "
            "key's (an object)"},
    {.name = "three_chance", .type = VAT_PARAM_REAL, .def = 0.4, .min = 0, .max = 1,
     .doc = "chance that a grouped report has three groups instead of two"},
    {.name = "fixture_format", .type = VAT_PARAM_STR, .def_str = "mixed",
     .doc = "fixture format: csv, xlsx, or mixed (drawn per task)"},
    {.name = "xlsx_share", .type = VAT_PARAM_REAL, .def = 0.4, .min = 0, .max = 1,
     .doc = "under mixed, the chance that a task's fixture is a workbook"},
    {0},
};

/* What the generator planted: where the asked column and the key lie,
 * and the totals it wrote, for confirm. */
struct dh_priv {
    size_t data_start; /* records before the first data row */
    int key_pos, asked_pos;
    struct vat_an_tally planted; /* key -> total of the asked column, hundredths */
};

static void dh_priv_free(void *p)
{
    struct dh_priv *d = p;
    vat_an_tally_release(&d->planted);
    free(d);
}

/* ---- values ----------------------------------------------------------------- */

/* Draws the copies of one flat row, in hundredths. */
static void dh_flat_values(struct vat_rng *r, int scen, int64_t rate_ppm, int64_t v[3])
{
    int64_t bp;
    switch (scen) {
    case F_SHIP:
        v[0] = vat_rng_range(r, 50, 15000);
        v[1] = (v[0] * 45359237 + 50000000) / 100000000; /* lb -> kg, rounded */
        break;
    case F_ORDERS:
        v[0] = vat_gen_cents(r, 1000, vat_rng_chance(r, 0.8) ? 40000 : 250000);
        v[1] = (v[0] * rate_ppm + 500000) / 1000000;
        break;
    case F_TICKETS:
        v[0] = vat_rng_range(r, 10, 2400);
        v[1] = v[0] + vat_rng_range(r, 0, 15000);
        v[2] = vat_rng_range(r, 25, 1200);
        break;
    default: /* F_CLAIMS */
        bp = (int64_t[]){0, 500, 1000, 2000}[vat_rng_below(r, 4)];
        v[0] = vat_gen_cents(r, 500, 150000);
        v[1] = (v[0] * bp + 5000) / 10000;
        v[2] = v[0] + v[1];
        break;
    }
}

/* ---- generation --------------------------------------------------------------- */

struct dh_layout {
    enum dh_shape shape;
    size_t data_start;
    int key_pos, asked_pos, trap_pos;
    bool integer;
};

/* A row of the drawn table before it is written: its key and values. */
struct dh_row {
    int key;
    int month; /* grouped */
    int32_t day;
    int64_t v[6];
    size_t seq; /* draw order, the tie-break of cmp_row_day */
};

/* A total order (by day, then draw order), so rows of one day keep their
 * order whatever the libc's qsort does with ties. */
static int cmp_row_day(const void *a, const void *b)
{
    const struct dh_row *x = a, *y = b;
    if (x->day != y->day)
        return (x->day > y->day) - (x->day < y->day);
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Makes sure the trap differs from gold: when the asked column and the
 * first same-named one total the same over the keys the question covers,
 * one asked cell moves by one unit. */
static void dh_arm(struct dh_row *rows, size_t n, int nkeys, int asked, int first, int one_key,
                   int64_t unit)
{
    for (int k = 0; k < nkeys; k++) {
        if (one_key >= 0 && k != one_key)
            continue;
        int64_t sa = 0, sf = 0;
        size_t at = n;
        for (size_t i = 0; i < n; i++) {
            if (rows[i].key != k)
                continue;
            sa += rows[i].v[asked];
            sf += rows[i].v[first];
            if (at == n)
                at = i;
        }
        if (sa != sf)
            return;
        if (at < n && k == (one_key >= 0 ? one_key : nkeys - 1))
            rows[at].v[asked] += unit;
    }
}

static void dh_fmt(int64_t v, bool integer, char *out, size_t cap)
{
    if (integer)
        snprintf(out, cap, "%lld", (long long)(v / 100));
    else
        vat_fmt_cents(v, out, cap);
}

/* Appends "`a`, `b` and `c`". */
static void dh_list(struct vat_buf *b, const char *const *items, int n)
{
    for (int i = 0; i < n; i++)
        vat_buf_printf(b, "%s`%s`", i == 0 ? "" : i == n - 1 ? " and " : ", ", items[i]);
}

/* The data section: names the file, says how its lines are laid out, and
 * inlines it whole or, when longer than t->inline_max_bytes, the lines up
 * to the header and as many data rows as fit.  Returns whether it showed
 * every data row (the prompt is then self-contained). */
static bool dh_prompt_data(struct vat_buf *b, const struct vat_task *t, const struct vat_csv *c,
                           size_t data_start, const char *layout)
{
    size_t data_rows = c->nrows - data_start;
    char *all = vat_csv_to_string(c);
    char *text = all;
    size_t shown = data_rows;
    if (strlen(all) > vat_task_inline_cap(t)) {
        struct vat_csv view = *c;
        size_t lo = data_start, hi = c->nrows;
        while (lo < hi) {
            size_t mid = lo + (hi - lo + 1) / 2;
            view.nrows = mid;
            char *s = vat_csv_to_string(&view);
            size_t len = strlen(s);
            free(s);
            if (len <= vat_task_inline_cap(t))
                lo = mid;
            else
                hi = mid - 1;
        }
        view.nrows = lo;
        text = vat_csv_to_string(&view);
        shown = lo - data_start;
    }
    vat_buf_printf(b, "The data is the CSV file `%s`: %s, then %zu data row%s.",
                   t->fixture[0].path, layout, data_rows, data_rows == 1 ? "" : "s");
    if (shown == data_rows)
        vat_buf_puts(b, " Its full contents:\n\n```csv\n");
    else
        vat_buf_printf(b,
                       " It is too long to show whole here: below are the lines up to its "
                       "header and its first %zu data rows only; the other %zu %s in the file, "
                       "and the answer must cover all %zu.\n\n```csv\n",
                       shown, data_rows - shown, data_rows - shown == 1 ? "row is" : "rows are",
                       data_rows);
    vat_buf_puts(b, text);
    if (b->len && b->data[b->len - 1] != '\n')
        vat_buf_putc(b, '\n');
    vat_buf_puts(b, "```\n");
    if (text != all)
        free(text);
    free(all);
    return shown == data_rows;
}

/* Draws nkeys distinct key values of the list. */
static int dh_keys(struct vat_task *t, struct vat_rng *r, const char *list, const char **keys,
                   int *nkeys, struct vat_err *e)
{
    long kmin = vat_task_int(t, "keys_min"), kmax = vat_task_int(t, "keys_max");
    long want = vat_rng_range(r, kmin, kmax);
    if (want > DH_MAX_KEYS)
        want = DH_MAX_KEYS;
    *nkeys = (int)vat_gen_distinct(r, list, keys, (size_t)want);
    if (*nkeys < 2)
        return vat_err_set(e, "%s: the '%s' word list has fewer than 2 entries", t->id, list);
    return 0;
}

/* ---- wording --------------------------------------------------------------- */

/* The opening of the data description, {a_kind} "a CSV" or "an Excel",
 * {kind} "CSV" or "Excel", {topic} the report. */
static const char *const dh_d_explicit[] = {
    "You are given {a_kind} export of {topic}.",
    "The file is {a_kind} export of {topic}.",
    "Below is {a_kind} export of {topic}.",
    "This {kind} export holds {topic}.",
};
static const char *const dh_d_natural[] = {
    "Here is our {kind} export of {topic}.",
    "Attached: {a_kind} export of {topic}.",
    "This {kind} export has {topic} in it.",
    "I pulled {topic} out of our system as {a_kind} export.",
};
/* The question: {total} "total `amount` under `Actual`" or "sum of the
 * weights in kilograms", {values} the same as a plural, {scope} " per
 * `region`" or one key. */
static const char *const dh_q_explicit[] = {
    "[[Question: what|What]] is the {total}{scope}?",
    "Add up the {values}{scope}: what total do you get?",
    "Which total do the {values} reach{scope}?",
    "Report the {total}{scope}.",
    "Compute the {total}{scope}.",
    "Give the {total}{scope}.",
};
static const char *const dh_q_natural[] = {
    "What's the {total}{scope}?",
    "Could you add up the {values}{scope}?",
    "How much do the {values} come to{scope}?",
    "I need the {values} totalled{scope}.",
    "[[For the monthly review|For the report I'm writing|For finance]], what is the "
    "{total}{scope}?",
    "Can you total the {values}{scope} for me?",
};
static const char *const dh_r_sum[] = {
    " Sum exactly: each total is a number with at most two decimals.",
    " Sum exactly; a total has at most two decimals.",
    " Sum exactly: a total is a number with two decimals at most.",
};
static const char *const dh_r_sum_int[] = {
    " Sum exactly: each total is a whole number.",
    " Sum exactly; a total is a whole number.",
};
/* What the explicit prompt says about the repeated names and the sum,
 * which natural prompts leave to the header itself. */
static const char *const dh_giveaways[] = {
    "each appear once per group", "both named", "all named", "Sum exactly", "tolerance",
    "not the first", NULL,
};
/* Naming the trap, which a natural prompt never does. */
static const char *const dh_defects[] = {
    "first column", "same name", "duplicate", "ambiguous", "confus", NULL,
};
static const char *const dh_answer_columns[] = {NULL};
/* The value-bearing conventions: which group the figures are under, and
 * which key a one-key question asks about ("{}" is the param's value). */
static const char *const dh_states_group[] = {"under `{}`", NULL};
static const char *const dh_states_key[] = {"`{}`", NULL};
static const struct vat_convention dh_conventions[] = {
    {"group", dh_states_group},
    {"key_value", dh_states_key},
    {NULL, NULL},
};

/* The data description's opening, in the task's style. */
static void dh_prompt_open(struct vat_buf *q, struct vat_task *t, bool book, const char *topic)
{
    const char *kv[] = {"a_kind", book ? "an Excel" : "a CSV", "kind", book ? "Excel" : "CSV",
                        "topic", topic, NULL};
    if (vat_prompt_natural(t))
        VAT_PROMPT_PUT(q, t, 'd', dh_d_natural, kv);
    else
        VAT_PROMPT_PUT(q, t, 'd', dh_d_explicit, kv);
}

/* The first cents from money on whose cell text (as the CSV or the
 * workbook holds it) side owns.  A grouped report's rows have no id: this
 * first figure (the first group's money, which arming never changes) is
 * the cell drawn in the task's side's half (vat_side_owns), so a row of a
 * train report is never a row of a test report. */
static int64_t dh_side_money(int side, int64_t money, bool book)
{
    for (;; money++) {
        char text[40];
        if (book) {
            double v = (double)money / 100.0;
            snprintf(text, sizeof text, "%.15g", v);
            if (strtod(text, NULL) != v)
                snprintf(text, sizeof text, "%.17g", v);
        } else {
            vat_fmt_cents(money, text, sizeof text);
        }
        if (vat_side_owns(side, text, strlen(text)))
            return money;
    }
}

/* The grouped shape: rows are (key, month), columns key, month, then per
 * group the money and the count column. */
static void dh_gen_grouped(struct vat_task *t, struct vat_rng *r, const struct dh_grouped *g,
                           const char **keys, int nkeys, struct vat_csv *c, struct dh_layout *L,
                           json_t *params, struct vat_buf *q, int *one_key, bool book,
                           char **total, char **values)
{
    int ng = vat_rng_chance(r, vat_task_real(t, "three_chance")) ? 3 : 2;
    const char *groups[3] = {g->groups[0], ng == 3 ? g->groups[1] : g->groups[2], g->groups[2]};
    int asked_group = 1 + (int)vat_rng_below(r, (uint32_t)ng - 1);
    int mi = (int)vat_rng_below(r, 2);
    bool merged = vat_rng_chance(r, 0.5), keys_on_top = vat_rng_chance(r, 0.35);

    long rmin = vat_task_int(t, "rows_min"), rmax = vat_task_int(t, "rows_max");
    long want = vat_rng_range(r, rmin, rmax);
    int nmonths = (int)(want / nkeys);
    nmonths = nmonths < 2 ? 2 : nmonths > 24 ? 24 : nmonths;
    size_t n = (size_t)nkeys * (size_t)nmonths;
    int year = (int)vat_rng_range(r, 2021, 2024), m0 = (int)vat_rng_range(r, 1, 12);
    struct dh_row *rows = vat_xcalloc(n, sizeof *rows);
    for (size_t i = 0; i < n; i++) {
        rows[i].month = (int)(i / (size_t)nkeys);
        rows[i].key = (int)(i % (size_t)nkeys);
        int64_t money = vat_gen_cents(r, 20000, vat_rng_chance(r, 0.8) ? 400000 : 2000000);
        money = dh_side_money(t->side, money, book);
        int64_t count = vat_rng_range(r, 1, 300);
        for (int k = 0; k < ng; k++) {
            int64_t pct = k == 0 ? 100 : vat_rng_range(r, 60, 140);
            rows[i].v[2 * k] = money * pct / 100;
            rows[i].v[2 * k + 1] = (count * pct + 50) / 100 * 100;
        }
    }
    *one_key = vat_rng_chance(r, vat_task_real(t, "one_key_chance"))
                   ? (int)vat_rng_below(r, (uint32_t)nkeys)
                   : -1;
    dh_arm(rows, n, nkeys, 2 * asked_group + mi, mi, *one_key, mi ? 100 : 1);

    /* The two header lines. */
    vat_csv_row_begin(c);
    vat_csv_add(c, keys_on_top ? g->key_col : "");
    vat_csv_add(c, keys_on_top ? "month" : "");
    for (int k = 0; k < ng; k++) {
        vat_csv_add(c, groups[k]);
        vat_csv_add(c, merged ? "" : groups[k]);
    }
    vat_csv_row_begin(c);
    vat_csv_add(c, keys_on_top ? "" : g->key_col);
    vat_csv_add(c, keys_on_top ? "" : "month");
    for (int k = 0; k < ng; k++) {
        vat_csv_add(c, g->measure[0]);
        vat_csv_add(c, g->measure[1]);
    }
    char buf[32];
    for (size_t i = 0; i < n; i++) {
        int ry, rm;
        char ym[8];
        vat_month_add(year, m0, rows[i].month, &ry, &rm);
        vat_csv_row_begin(c);
        vat_csv_add(c, keys[rows[i].key]);
        vat_csv_add(c, vat_fmt_month(ry, rm, ym));
        for (int k = 0; k < 2 * ng; k++) {
            dh_fmt(rows[i].v[k], k % 2 == 1, buf, sizeof buf);
            vat_csv_add(c, buf);
        }
    }
    free(rows);
    L->shape = S_GROUPED;
    L->data_start = 2;
    L->key_pos = 0;
    L->asked_pos = 2 + 2 * asked_group + mi;
    L->trap_pos = 2 + mi;
    L->integer = mi == 1;

    dh_prompt_open(q, t, book, g->topic);
    struct vat_buf gl = VAT_BUF_INIT;
    dh_list(&gl, groups, ng);
    const char *kv[] = {"groups", gl.data, "m0", g->measure[0], "d0", g->doc[0],
                        "m1", g->measure[1], "d1", g->doc[1], "key", g->key_col, NULL};
    if (vat_prompt_natural(t))
        vat_prompt_say(q, t, 'x',
                       " [[The header takes two rows|The header is two rows deep]]: the group "
                       "names ({groups}) sit above the columns each group covers, and below "
                       "them every group has `{m0}` ({d0}) and `{m1}` ({d1}). `{key}` and "
                       "`month` (YYYY-MM) [[identify the rows|say which row is which]]; "
                       "[[money has two decimals, counts are whole numbers|amounts have two "
                       "decimals and counts are whole]].\n\n",
                       kv);
    else
        vat_prompt_say(q, t, 'x',
                       " Its header spans two lines: one names the groups ({groups}) over the "
                       "columns they cover, the other names the columns within each group "
                       "(`{m0}`, {d0}, and `{m1}`, {d1}), so `{m0}` and `{m1}` each appear once "
                       "per group. `{key}` and `month` (YYYY-MM) [[say which row is which|identify "
                       "the rows]]; [[the money columns are decimals with two places, the counts "
                       "whole numbers|money columns hold decimals with two places and counts "
                       "whole numbers]].\n\n",
                       kv);
    vat_buf_release(&gl);
    *total = vat_xasprintf("total `%s` under `%s`", g->measure[mi], groups[asked_group]);
    *values = vat_xasprintf("`%s` figures under `%s`", g->measure[mi], groups[asked_group]);
    json_object_set_new(params, "key", json_string(g->key_col));
    json_object_set_new(params, "measure", json_string(g->measure[mi]));
    json_object_set_new(params, "group", json_string(groups[asked_group]));
    json_object_set_new(params, "groups", json_integer(ng));
}

/* The flat and titled shapes. */
static void dh_gen_flat(struct vat_task *t, struct vat_rng *r, enum dh_shape shape,
                        const struct dh_flat *f, const char **keys, int nkeys, struct vat_csv *c,
                        struct dh_layout *L, json_t *params, struct vat_buf *q, int *one_key,
                        bool book, char **total, char **values)
{
    int scen = (int)(f - dh_flats);
    int asked = 1 + (int)vat_rng_below(r, (uint32_t)f->copies - 1);
    int64_t rate_ppm = vat_rng_range(r, 850000, 950000);

    long rmin = vat_task_int(t, "rows_min"), rmax = vat_task_int(t, "rows_max");
    long want = vat_rng_range(r, rmin, rmax);
    size_t n = want < 2 * nkeys ? (size_t)(2 * nkeys) : (size_t)want;
    struct dh_row *rows = vat_xcalloc(n, sizeof *rows);
    int32_t start = vat_date_from_civil(2022, 1, 1) + (int32_t)vat_rng_range(r, 0, 900);
    int32_t span = (int32_t)vat_rng_range(r, 14, 90);
    for (size_t i = 0; i < n; i++) {
        /* Every key at least twice, the rest at random. */
        rows[i].key = i < (size_t)(2 * nkeys) ? (int)(i % (size_t)nkeys)
                                              : (int)vat_rng_below(r, (uint32_t)nkeys);
        rows[i].day = start + (int32_t)vat_rng_range(r, 0, span);
        dh_flat_values(r, scen, rate_ppm, rows[i].v);
        rows[i].seq = i;
    }
    qsort(rows, n, sizeof *rows, cmp_row_day);
    *one_key = vat_rng_chance(r, vat_task_real(t, "one_key_chance"))
                   ? (int)vat_rng_below(r, (uint32_t)nkeys)
                   : -1;
    dh_arm(rows, n, nkeys, asked, 0, *one_key, 1);

    size_t width = 3 + (size_t)f->copies;
    struct vat_buf note = VAT_BUF_INIT;
    vat_buf_printf(&note, "the %s %s columns are, in order: ",
                   f->copies == 2 ? "two" : "three", f->name);
    for (int k = 0; k < f->copies; k++)
        vat_buf_printf(&note, "%s%s", k ? "; " : "", f->doc[k]);
    size_t lines = 0;
    if (shape == S_TITLED) {
        /* Title and notes above the header, padded to the table's width
         * as a spreadsheet writes them, or not. */
        bool pad = vat_rng_chance(r, 0.5);
        char company[64], date[11];
        vat_gen_company(r, company, sizeof company);
        vat_fmt_date(start + span + (int32_t)vat_rng_range(r, 1, 10), date);
        const char *sys = VAT_PICK(r, ((const char *const[]){"the ERP", "the reporting portal",
                                                              "the operations dashboard"}));
        char *title_lines[4];
        int nt = 0;
        title_lines[nt++] = vat_xasprintf("%s - %s", company, f->title);
        title_lines[nt++] = vat_xasprintf("Exported %s from %s", date, sys);
        title_lines[nt++] = vat_xasprintf("Note: %s.", note.data);
        if (vat_rng_chance(r, 0.5))
            title_lines[nt++] = vat_xstrdup("Confidential - internal use only");
        for (int k = 0; k < nt; k++) {
            vat_csv_row_begin(c);
            vat_csv_add(c, title_lines[k]);
            for (size_t j = 1; pad && j < width; j++)
                vat_csv_add(c, "");
            free(title_lines[k]);
        }
        lines = (size_t)nt;
    }
    vat_csv_row_begin(c);
    vat_csv_add(c, f->id_col);
    vat_csv_add(c, f->key_col);
    vat_csv_add(c, f->date_col);
    for (int k = 0; k < f->copies; k++)
        vat_csv_add(c, f->name);
    long id = (long)vat_rng_range(r, 10000, 90000);
    char buf[32], date[11];
    for (size_t i = 0; i < n; i++) {
        id += (long)vat_rng_range(r, 1, 7);
        id = vat_side_next_id(t->side, f->id_prefix, 6, id);
        vat_csv_row_begin(c);
        vat_csv_addf(c, "%s%06ld", f->id_prefix, id);
        vat_csv_add(c, keys[rows[i].key]);
        vat_csv_add(c, vat_fmt_date(rows[i].day, date));
        for (int k = 0; k < f->copies; k++) {
            vat_fmt_cents(rows[i].v[k], buf, sizeof buf);
            vat_csv_add(c, buf);
        }
    }
    free(rows);
    L->shape = shape;
    L->data_start = lines + 1;
    L->key_pos = 1;
    L->asked_pos = 3 + asked;
    L->trap_pos = 3;
    L->integer = false;

    dh_prompt_open(q, t, book, f->topic);
    const char *copies = f->copies == 2 ? "two" : "three";
    if (vat_prompt_natural(t)) {
        vat_buf_printf(q, " It has `%s`, `%s`, `%s` (YYYY-MM-DD) and %s `%s` columns", f->id_col,
                       f->key_col, f->date_col, copies, f->name);
        if (shape == S_FLAT) {
            vat_buf_puts(q, ": ");
            for (int k = 0; k < f->copies; k++)
                vat_buf_printf(q, "%s%s", k == 0 ? "" : k == f->copies - 1 ? ", then " : ", ",
                               f->doc[k]);
            vat_buf_puts(q, ". ");
        } else {
            vat_buf_printf(q, "; it came out of a spreadsheet, so a title and notes sit above "
                              "the header, and one note says what each `%s` column holds. ",
                           f->name);
        }
        vat_buf_puts(q, "Values have two decimals.\n\n");
    } else {
        vat_buf_printf(q, " It has the columns `%s`, `%s`, `%s` (YYYY-MM-DD) and %s columns %s "
                          "named `%s`. ",
                       f->id_col, f->key_col, f->date_col, copies,
                       f->copies == 2 ? "both" : "all", f->name);
        if (shape == S_FLAT)
            vat_buf_printf(q, "The header is on the first line, and %s. ", note.data);
        else
            vat_buf_printf(q, "The file was exported from a spreadsheet: title and note lines "
                              "sit above its header line, and a note there says what each `%s` "
                              "column holds. ",
                           f->name);
        vat_buf_puts(q, "The values are decimals with two places.\n\n");
    }
    vat_buf_release(&note);
    *total = vat_xasprintf("sum of the %s", f->ask[asked]);
    *values = vat_xstrdup(f->ask[asked]);
    json_object_set_new(params, "key", json_string(f->key_col));
    json_object_set_new(params, "measure", json_string(f->name));
    json_object_set_new(params, "occurrence", json_integer(asked + 1));
    json_object_set_new(params, "meaning", json_string(f->doc[asked]));
    json_object_set_new(params, "disambiguated_by",
                        json_string(shape == S_TITLED ? "note in the file"
                                    : f->by_unit    ? "unit"
                                                    : "position"));
}

#define DH_SHEET "Report"

/* The workbook: the CSV's lines as the rows of sheet Report, data cells
 * that are numbers as number cells, every other non-empty cell as text;
 * in the grouped shape a group label followed by blank group cells (the
 * CSV's picture of a merged cell) becomes a real merged cell over its
 * sub-columns.  Records params.workbook. */
static int dh_write_book(struct vat_task *t, const struct vat_csv *c, const struct dh_layout *L,
                         const char *rel, json_t *params, struct vat_err *e)
{
    struct vat_xl_book b = VAT_XL_BOOK_INIT;
    struct vat_xl_sheet *s = vat_xl_add_sheet(&b, DH_SHEET);
    size_t width = c->row[L->data_start - 1].n;
    for (size_t r = 0; r < c->nrows; r++) {
        bool header = r + 1 == L->data_start || (L->shape == S_GROUPED && r + 2 == L->data_start);
        for (size_t k = 0; k < c->row[r].n; k++) {
            const char *v = c->row[r].cell[k];
            int64_t cents;
            if (!v[0])
                continue;
            if (r >= L->data_start && vat_parse_cents(v, &cents) == 0)
                vat_xl_set_num(s, (uint32_t)r, (uint32_t)k, (double)cents / 100.0,
                               strchr(v, '.') ? VAT_XL_MONEY : VAT_XL_PLAIN);
            else
                vat_xl_set_str(s, (uint32_t)r, (uint32_t)k, v,
                               header ? VAT_XL_BOLD : r == 0 ? VAT_XL_TITLE : VAT_XL_PLAIN);
        }
    }
    bool merged = false;
    if (L->shape == S_GROUPED) {
        size_t gr = L->data_start - 2;
        for (size_t k = 0; k < width;) {
            size_t end = k + 1;
            if (vat_csv_get(c, gr, k)[0])
                while (end < width && !vat_csv_get(c, gr, end)[0] &&
                       vat_csv_get(c, gr + 1, end)[0])
                    end++;
            if (end - k > 1) {
                vat_xl_merge(s, (uint32_t)gr, (uint32_t)k, (uint32_t)gr, (uint32_t)(end - 1));
                merged = true;
            }
            k = end;
        }
    }
    for (size_t k = 0; k < width && k < 32; k++)
        s->col_width[k] = 14;
    int rc = vat_xl_write(&b, t->root, rel, e);
    vat_xl_release(&b);
    if (rc != 0)
        return -1;
    json_t *lay = json_array();
    if (L->shape == S_GROUPED)
        json_array_append_new(lay, json_string("group_header"));
    if (L->shape == S_TITLED)
        json_array_append_new(lay, json_string("title_notes"));
    json_object_set_new(params, "workbook",
                        json_pack("{s:s, s:o, s:s, s:b, s:i, s:i}", "sheet", DH_SHEET, "layouts",
                                  lay, "trap", L->shape == S_GROUPED ? "group_header" : "own",
                                  "merged", merged, "header_row", (int)L->data_start,
                                  "data_row", (int)L->data_start + 1));
    return 0;
}

/* The data section of a workbook: names the file and sheet, says how its
 * rows are laid out, then the grid with A1 addresses.  Returns whether
 * every row is shown. */
static bool dh_prompt_book(struct vat_buf *b, const struct vat_task *t, const struct vat_csv *c,
                           size_t data_start, const char *layout)
{
    size_t data_rows = c->nrows - data_start;
    vat_buf_printf(b, "The data is the Excel workbook `%s`, sheet `" DH_SHEET "` (a line of "
                      "the export is a row of the sheet): %s, then %zu data row%s. ",
                   t->fixture[0].path, layout, data_rows, data_rows == 1 ? "" : "s");
    struct vat_xl_book book = VAT_XL_BOOK_INIT;
    struct vat_err e;
    bool whole = false;
    if (vat_xl_task_read(t, 0, &book, &e) == 0)
        whole = vat_xl_prompt(b, t, 0, &book);
    vat_xl_release(&book);
    return whole;
}

static int dh_generate(struct vat_task *t, struct vat_rng *r, struct vat_err *e)
{
    enum dh_shape shape = (enum dh_shape)(t->index % DH_NSHAPES);
    const char *keys[DH_MAX_KEYS];
    int nkeys;
    struct vat_csv c = VAT_CSV_INIT;
    struct dh_layout L;
    struct vat_buf b = VAT_BUF_INIT;
    int one_key;
    json_t *params = json_object();
    json_object_set_new(params, "shape", json_string(dh_shape_name[shape]));

    /* The fixture's format names the export in the prompt; it draws from
     * its own sub-stream, so asking it first moves nothing. */
    const char *format = vat_xl_task_format(t, NULL);
    bool book = format && strcmp(format, "xlsx") == 0;
    char *total = NULL, *values = NULL;

    /* The scenario first: it decides which word list the keys come from. */
    const char *key_col;
    if (shape == S_GROUPED) {
        const struct dh_grouped *g = &dh_groupeds[vat_rng_below(r, DH_NGROUPED)];
        if (dh_keys(t, r, g->key_list, keys, &nkeys, e) != 0) {
            json_decref(params);
            return -1;
        }
        dh_gen_grouped(t, r, g, keys, nkeys, &c, &L, params, &b, &one_key, book, &total,
                       &values);
        key_col = g->key_col;
    } else {
        const struct dh_flat *f = &dh_flats[vat_rng_below(r, DH_NFLAT)];
        if (dh_keys(t, r, f->key_list, keys, &nkeys, e) != 0) {
            json_decref(params);
            return -1;
        }
        dh_gen_flat(t, r, shape, f, keys, nkeys, &c, &L, params, &b, &one_key, book, &total,
                    &values);
        key_col = f->key_col;
    }

    bool nat = vat_prompt_natural(t);
    char *scope = one_key < 0 ? vat_xasprintf(nat ? " for each `%s`" : " per `%s`", key_col)
                  : nat       ? vat_xasprintf(" for `%s` `%s`", key_col, keys[one_key])
                              : vat_xasprintf(" of the rows whose `%s` is exactly `%s`", key_col,
                                              keys[one_key]);
    const char *kv[] = {"total", total, "values", values, "scope", scope, NULL};
    if (nat)
        VAT_PROMPT_PUT(&b, t, 'q', dh_q_natural, kv);
    else
        VAT_PROMPT_PUT(&b, t, 'q', dh_q_explicit, kv);
    free(scope);
    free(total);
    free(values);
    if (!nat && L.integer)
        VAT_PROMPT_PUT(&b, t, 'r', dh_r_sum_int, NULL);
    else if (!nat)
        VAT_PROMPT_PUT(&b, t, 'r', dh_r_sum, NULL);
    vat_buf_puts(&b, "\n\n");
    char *shape_text =
        one_key >= 0
            ? vat_xstrdup(nat ? "the total as a JSON number, like <total>"
                              : "the total as a JSON number, written like <total> with no "
                                "quotes, unit or thousands separator")
            : vat_xasprintf(nat ? "a JSON object from each `%s`, spelled as in the file, to its "
                                  "total as a number, [[like|for example|e.g.]] {\"<%s>\": <total>}"
                                : "an object whose keys are the values of `%s` spelled exactly "
                                  "as in the file and whose values are the totals as JSON "
                                  "numbers, for example {\"<%s>\": <total>, \"<other %s>\": "
                                  "<total>}. [[Key order does not matter|The order of the keys "
                                  "does not matter]]",
                            key_col, key_col, key_col);
    vat_prompt_answer(&b, t, shape_text);
    free(shape_text);
    if (!nat) {
        vat_buf_putc(&b, ' ');
        vat_prompt_tolerance(&b, t, DH_REL_TOL, DH_ABS_TOL);
    }
    vat_buf_puts(&b, "\n\n");
    json_object_set_new(params, "answer", json_string(one_key >= 0 ? "one_key" : "per_key"));
    if (one_key >= 0)
        json_object_set_new(params, "key_value", json_string(keys[one_key]));

    /* Write and record the fixture: its columns are the header's names. */
    char *rel = vat_task_fixture_relpath(t, book ? ".xlsx" : ".csv");
    if (!format || (book ? dh_write_book(t, &c, &L, rel, params, e)
                         : vat_csv_write(&c, t->root, rel, e)) != 0) {
        if (!format)
            vat_err_set(e, "%s: fixture_format '%s' is none of csv, xlsx, mixed", t->id,
                        vat_task_str(t, "fixture_format"));
        free(rel);
        vat_csv_release(&c);
        vat_buf_release(&b);
        json_decref(params);
        return -1;
    }
    struct vat_fixture *fx = vat_task_add_fixture(t, rel, book ? "xlsx" : "csv", "main");
    free(rel);
    fx->rows = (long)(c.nrows - L.data_start);
    const struct vat_csv_row *names = &c.row[L.data_start - 1];
    for (size_t j = 0; j < names->n; j++) {
        const char *nm = names->cell[j][0] ? names->cell[j] : vat_csv_get(&c, L.data_start - 2, j);
        json_array_append_new(fx->columns, json_string(nm));
    }

    char layout[96];
    if (shape == S_GROUPED)
        snprintf(layout, sizeof layout, "a header on two lines");
    else if (shape == S_FLAT)
        snprintf(layout, sizeof layout, "a header line");
    else
        snprintf(layout, sizeof layout, "%zu title and note lines, a header line",
                 L.data_start - 1);
    if (book)
        t->self_contained = dh_prompt_book(&b, t, &c, L.data_start, layout);
    else
        t->self_contained = dh_prompt_data(&b, t, &c, L.data_start, layout);
    t->prompt = vat_buf_detach(&b);

    struct dh_priv *pv = vat_xcalloc(1, sizeof *pv);
    pv->data_start = L.data_start;
    pv->key_pos = L.key_pos;
    pv->asked_pos = L.asked_pos;
    for (size_t i = L.data_start; i < c.nrows; i++) {
        int64_t v = 0;
        if (vat_parse_cents(vat_csv_get(&c, i, (size_t)L.asked_pos), &v) != 0)
            v = 0;
        const char *k = vat_csv_get(&c, i, (size_t)L.key_pos);
        if (one_key < 0 || strcmp(k, keys[one_key]) == 0)
            vat_an_tally_add(&pv->planted, k, v);
    }
    t->priv = pv;
    t->priv_free = dh_priv_free;
    t->params = params;

    vat_csv_release(&c);

    struct vat_an_spec s = {.shape = one_key >= 0 ? "number" : "object", .integer = L.integer,
                            .rel_tol = DH_REL_TOL, .abs_tol = DH_ABS_TOL};
    t->spec = vat_an_value_spec(&s);
    return 0;
}

/* ---- reading the file back by its header ---------------------------------------- */

/* Where the header logic finds the table: the first data record, the key
 * column and the asked column (or, with first_of_name, the first column
 * carrying the asked name, which is the trap). */
struct dh_found {
    size_t data_start;
    int key, col;
};

static int dh_find(const struct vat_task *t, const struct vat_csv *c, bool first_of_name,
                   struct dh_found *out, struct vat_err *e)
{
    const char *shape = json_string_value(json_object_get(t->params, "shape"));
    const char *key = json_string_value(json_object_get(t->params, "key"));
    const char *measure = json_string_value(json_object_get(t->params, "measure"));
    const char *rel = t->fixture[0].path;
    if (!shape || !key || !measure)
        return vat_err_set(e, "%s: params lack the shape, key or measure", t->id);
    out->key = out->col = -1;

    if (strcmp(shape, "grouped") == 0) {
        const char *group = json_string_value(json_object_get(t->params, "group"));
        if (!group)
            return vat_err_set(e, "%s: params lack the group", t->id);
        /* The names line is the first that holds the measure; the groups
         * line is the one above it.  A blank group cell continues the
         * group to its left (a merged cell); a blank name takes the text
         * above it (a key column named on the groups line). */
        size_t nr = 1;
        while (nr < c->nrows && vat_csv_col(c, nr, measure) < 0)
            nr++;
        if (nr >= c->nrows)
            return vat_err_set(e, "%s: '%s' has no header line naming '%s' below another line",
                               t->id, rel, measure);
        const struct vat_csv_row *gr = &c->row[nr - 1], *nm = &c->row[nr];
        const char *cur = "";
        for (size_t j = 0; j < nm->n; j++) {
            const char *gcell = j < gr->n ? gr->cell[j] : "";
            if (gcell[0])
                cur = gcell;
            const char *name = nm->cell[j][0] ? nm->cell[j] : gcell;
            if (strcmp(name, key) == 0 && out->key < 0)
                out->key = (int)j;
            if (strcmp(name, measure) != 0)
                continue;
            if (first_of_name ? out->col < 0 : strcmp(cur, group) == 0) {
                if (out->col >= 0)
                    return vat_err_set(e, "%s: '%s' has two '%s' columns under '%s'", t->id,
                                       rel, measure, group);
                out->col = (int)j;
            }
        }
        out->data_start = nr + 1;
    } else {
        long occ = json_integer_value(json_object_get(t->params, "occurrence"));
        if (first_of_name)
            occ = 1;
        if (occ < 1)
            return vat_err_set(e, "%s: params lack the occurrence", t->id);
        /* The header is the first line holding the key's name and at
         * least occ cells named like the measure: title and note lines
         * above it hold neither. */
        size_t h = 0;
        for (; h < c->nrows; h++) {
            const struct vat_csv_row *row = &c->row[h];
            long seen = 0;
            int kpos = -1, cpos = -1;
            for (size_t j = 0; j < row->n; j++) {
                if (strcmp(row->cell[j], key) == 0 && kpos < 0)
                    kpos = (int)j;
                if (strcmp(row->cell[j], measure) == 0 && ++seen == occ)
                    cpos = (int)j;
            }
            if (kpos >= 0 && cpos >= 0) {
                out->key = kpos;
                out->col = cpos;
                break;
            }
        }
        if (h >= c->nrows)
            return vat_err_set(e, "%s: '%s' has no header line with '%s' and %ld '%s' columns",
                               t->id, rel, key, occ, measure);
        out->data_start = h + 1;
    }
    if (out->key < 0 || out->col < 0)
        return vat_err_set(e, "%s: '%s' has no '%s' column or no asked '%s' column", t->id, rel,
                           key, measure);
    size_t width = c->row[out->data_start - 1].n;
    for (size_t i = out->data_start; i < c->nrows; i++)
        if (c->row[i].n != width)
            return vat_err_set(e, "%s: '%s' record %zu has %zu cells, the header %zu", t->id,
                               rel, i + 1, c->row[i].n, width);
    if (out->data_start >= c->nrows)
        return vat_err_set(e, "%s: '%s' has no data rows", t->id, rel);
    return 0;
}

/* Totals column col per key over the data rows (only the asked key when
 * the question names one) as the answer's JSON.  NULL with e set. */
static json_t *dh_total(const struct vat_task *t, const struct vat_csv *c, size_t data_start,
                        int key, int col, struct vat_err *e)
{
    const char *one = json_string_value(json_object_get(t->params, "key_value"));
    bool integer = json_is_true(json_object_get(t->spec, "integer"));
    struct vat_an_tally sums = VAT_AN_TALLY_INIT;
    for (size_t i = data_start; i < c->nrows; i++) {
        const char *k = vat_csv_get(c, i, (size_t)key);
        if (one && strcmp(k, one) != 0)
            continue;
        int64_t v;
        const char *cell = vat_csv_get(c, i, (size_t)col);
        if (vat_parse_cents(cell, &v) != 0 || (integer && v % 100 != 0)) {
            vat_err_set(e, "%s: '%s' record %zu: '%s' is not a %s", t->id, t->fixture[0].path,
                        i + 1, cell, integer ? "whole number" : "decimal with two places");
            vat_an_tally_release(&sums);
            return NULL;
        }
        vat_an_tally_add(&sums, k, v);
    }
    json_t *out = NULL;
    if (one) {
        const struct vat_an_entry *x = vat_an_tally_find(&sums, one);
        if (!x)
            vat_err_set(e, "%s: '%s' has no row of '%s'", t->id, t->fixture[0].path, one);
        else
            out = integer ? json_integer((json_int_t)(x->sum / 100))
                          : json_real((double)x->sum / 100.0);
    } else {
        vat_an_tally_sort(&sums);
        out = json_object();
        for (size_t i = 0; i < sums.n; i++)
            json_object_set_new(out, sums.e[i].key,
                                integer ? json_integer((json_int_t)(sums.e[i].sum / 100))
                                        : json_real((double)sums.e[i].sum / 100.0));
    }
    vat_an_tally_release(&sums);
    return out;
}

/* Reads the fixture as lines of cells: the CSV, or the workbook's sheet
 * through our reader (a merged group cell reads as its label then
 * blanks, as the CSV writes it).  0 or -1 with e set. */
static int dh_read(const struct vat_task *t, struct vat_csv *c, struct vat_err *e)
{
    if (strcmp(t->fixture[0].format, "xlsx") != 0)
        return vat_csv_read(c, t->root, t->fixture[0].path, e);
    struct vat_xl_book book = VAT_XL_BOOK_INIT;
    if (vat_xl_task_read(t, 0, &book, e) != 0)
        return -1;
    const struct vat_xl_sheet *s = vat_xl_find_sheet(&book, DH_SHEET);
    int rc = s ? vat_xl_sheet_csv(s, c, e)
               : vat_err_set(e, "%s: '%s' has no sheet '" DH_SHEET "'", t->id, t->fixture[0].path);
    vat_xl_release(&book);
    return rc;
}

/* Reads the fixture and totals the column the header logic finds. */
static json_t *dh_answer(const struct vat_task *t, bool first_of_name, struct vat_err *e)
{
    struct vat_csv c = VAT_CSV_INIT;
    struct dh_found f = {0};
    if (dh_read(t, &c, e) != 0)
        return NULL;
    json_t *v = NULL;
    if (dh_find(t, &c, first_of_name, &f, e) == 0)
        v = dh_total(t, &c, f.data_start, f.key, f.col, e);
    vat_csv_release(&c);
    return v;
}

static int dh_reference(struct vat_task *t, struct vat_err *e)
{
    json_t *gold = dh_answer(t, false, e);
    if (!gold)
        return -1;
    vat_an_set_gold(t, gold);
    return 0;
}

/* By position: the generator's planted data start, key and column, with
 * no look at any header text; then the totals the generator wrote. */
static int dh_confirm(const struct vat_task *t, struct vat_err *e)
{
    const struct dh_priv *pv = t->priv;
    if (!pv)
        return vat_err_set(e, "%s: confirm needs the planted column positions", t->id);
    struct vat_csv c = VAT_CSV_INIT;
    if (dh_read(t, &c, e) != 0)
        return -1;
    if (c.nrows <= pv->data_start) {
        vat_csv_release(&c);
        return vat_err_set(e, "%s: '%s' has no data rows at record %zu", t->id,
                           t->fixture[0].path, pv->data_start + 1);
    }
    json_t *v = dh_total(t, &c, pv->data_start, pv->key_pos, pv->asked_pos, e);
    vat_csv_release(&c);
    if (!v)
        return -1;
    int rc = vat_an_confirm_gold(t, v, "the planted column positions", 0, 0, e);
    json_decref(v);
    if (rc != 0)
        return rc;
    const char *one = json_string_value(json_object_get(t->params, "key_value"));
    bool integer = json_is_true(json_object_get(t->spec, "integer"));
    /* A test that swaps the file clears the planted totals. */
    struct vat_an_tally planted = pv->planted;
    if (planted.n == 0)
        return 0;
    if (one) {
        const struct vat_an_entry *x = vat_an_tally_find(&planted, one);
        v = !x ? json_null()
               : integer ? json_integer((json_int_t)(x->sum / 100))
                         : json_real((double)x->sum / 100.0);
    } else {
        v = json_object();
        for (size_t i = 0; i < planted.n; i++)
            json_object_set_new(v, planted.e[i].key,
                                integer ? json_integer((json_int_t)(planted.e[i].sum / 100))
                                        : json_real((double)planted.e[i].sum / 100.0));
    }
    rc = vat_an_confirm_gold(t, v, "the generator's planted totals", 0, 0, e);
    json_decref(v);
    return rc;
}

static int dh_trap(struct vat_task *t, struct vat_err *e)
{
    json_t *v = dh_answer(t, true, e);
    if (!v)
        return -1;
    vat_an_set_trap(t, v);
    return 0;
}

const struct vat_template vat_tmpl_dup_header = {
    .version = VAT_TEMPLATE_V1,
    .name = "dup_header",
    .family = "probe",
    .answer_kind = "value",
    .trap = "Reading the first column of the repeated name (what a reader keyed by column name "
            "returns) instead of the one the question picks by group, unit or position.",
    .summary = "Totals of one of several same-named columns, under a two-line header, a plain "
               "header or title lines.",
    .params = dh_params,
    .default_count = 12,
    .generate = dh_generate,
    .reference = dh_reference,
    .confirm = dh_confirm,
    .trap_answer = dh_trap,
    .check = vat_check_task,
    .giveaways = dh_giveaways,
    .conventions = dh_conventions,
    .defects = dh_defects,
    .answer_columns = dh_answer_columns,
};
