/* unanswerable.c — the unanswerable probe: an orders CSV and a question of
 * the filtered_total form ("the total <column> of customer <C>'s orders
 * in <YYYY-MM>") that the file cannot answer in one of three ways — the
 * column is absent though a similar one exists, the month lies outside the
 * dates the file spans, or the customer is absent though one with a
 * similar name is present — or, for the answerable controls of the same
 * form, can.  The answer is the total, or exactly {"answerable": false}.
 * The trap on an unanswerable task is the total computed from the most
 * similar column, month or customer; on a control it is abstaining.
 *
 * Which tasks are controls depends on the task index and `control_ratio`
 * alone (evenly spaced, index 0 a control, every prefix of the tasks at
 * least half controls), and the kinds take turns, so a corpus of any
 * count holds every kind.  Exports vat_tmpl_unanswerable. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "analytics.h"
#include "csvio.h"
#include "prompt.h"
#include "jsonout.h"
#include "template.h"
#include "values.h"

#define UN_REL_TOL 1e-9
#define UN_ABS_TOL 1e-6
#define UN_MAX_CUSTOMERS 12
#define UN_MAX_MONTHS 10
#define UN_ABSTENTION "{\"answerable\":false}"

/* The columns every fixture opens with; the measure columns follow. */
enum { C_ID, C_DATE, C_CUSTOMER, C_REGION, UN_NFIXED };
static const char *const un_fixed[UN_NFIXED] = {"order_id", "ordered_on", "customer", "region"};

enum un_kind { K_COLUMN, K_PERIOD, K_ENTITY, UN_NKINDS };
static const char *const un_kind_name[UN_NKINDS] = {"column", "period", "entity"};
static const char *const un_control_name[UN_NKINDS] = {"control-of-column", "control-of-period",
                                                       "control-of-entity"};

/* A measure the question asks for and the near-miss column beside it:
 * the near miss is in every fixture, the asked one in all but the
 * column-kind unanswerable ones.  Neither can be derived from the other
 * and the rest of the file (no base amount is written). */
struct un_measure {
    const char *asked;
    const char *similar;
    const char *meaning; /* of the asked column, for the prompt */
    bool integer;        /* whole numbers, written without decimals */
};
enum { M_NET, M_SHIPPING, M_DISCOUNT, M_TAX, M_UNITS, UN_NMEASURES };
static const struct un_measure un_measures[UN_NMEASURES] = {
    {"net_amount", "gross_amount", "the order amount after discount", false},
    {"shipping_fee", "shipping_weight_kg", "the shipping fee charged for the order", false},
    {"discount_amount", "discount_pct", "the discount given on the order, in money", false},
    {"tax_amount", "tax_rate_pct", "the tax charged on the order, in money", false},
    {"units_shipped", "units_ordered", "the number of units shipped", true},
};

/* Natural style: a plain question; the reader decides whether the file
 * can answer it. */
/* The explicit question, ways of asking it; the rules that follow it are
 * the same. */
static const char *const un_q_explicit[] = {
    "[[Question: what|What]] is the total `{col}` ({meaning}) of the orders of the customer "
    "`{cust}` placed in {month}, that is with `ordered_on` from {from} through {to}?",
    "What do the `{col}` values ({meaning}) of the customer `{cust}`'s orders placed in "
    "{month} (`ordered_on` from {from} through {to}) add up to?",
    "Sum `{col}` ({meaning}) over the orders the customer `{cust}` placed in {month}, with "
    "`ordered_on` from {from} through {to}: what is the total?",
    "Compute the total `{col}` ({meaning}) of the customer `{cust}`'s orders of {month}, "
    "that is with `ordered_on` from {from} through {to}.",
    "Give the sum of `{col}` ({meaning}) over the customer `{cust}`'s orders of {month} "
    "(`ordered_on` from {from} through {to}).",
};
static const char *const un_q_natural[] = {
    "What was the total `{col}` ({meaning}) of {cust}'s orders in {when}?",
    "How much `{col}` ({meaning}) did {cust} order from us in {when}, in total?",
    "Could you give me {cust}'s total `{col}` ({meaning}) for {when}?",
    "For {when}, what is the sum of `{col}` ({meaning}) over the orders of {cust}?",
    "I need {cust}'s `{col}` ({meaning}) for {when}, added up over their orders.",
    "[[For the account review|For the customer statement|For our quarterly check]], what "
    "did {cust}'s orders in {when} total in `{col}` ({meaning})?",
};
static const char *const un_d_natural[] = {
    "[[Here is|Attached is|Below is]] an export of orders from our sales system, [[one order "
    "per row|a row per order]], with [[its column names in the header|a header line]]; "
    "`ordered_on` is [[the order date|when it was ordered]] (YYYY-MM-DD) and `customer` [[the "
    "customer's company name|the company that ordered]].",
    "This is [[an export|a dump]] of our sales system's orders: a header line, then [[one row "
    "per order|a row for each order]]. `ordered_on` holds [[the order date|the date of the "
    "order]] (YYYY-MM-DD), `customer` [[the company that ordered|the customer's company "
    "name]].",
    "I've pulled the orders out of our [[sales system|order system]], one row each, under a "
    "header line; `customer` is [[the customer's company name|the ordering company]] and "
    "`ordered_on` [[the order date|the day of the order]] (YYYY-MM-DD).",
};
static const char *const un_d_explicit[] = {
    "You are given an export of orders from a sales system, [[one order per row|one row per "
    "order]], with the header on the first line; `ordered_on` is [[the order date|the date of "
    "the order]] (YYYY-MM-DD) and `customer` the customer's company name.",
    "The data is an export of orders from a sales system: each row is one order, with the "
    "column names in the header on the first line; `ordered_on` is [[the order date|the date "
    "of the order]] (YYYY-MM-DD) and `customer` [[the customer's company name|the name of the "
    "customer's company]].",
    "Below is a sales system's order export: the header on the first line, then [[one order "
    "per row|a row for each order]]. `customer` is [[the customer's company name|the ordering "
    "company]] and `ordered_on` [[the order date|the date of the order]] (YYYY-MM-DD).",
};
static const char *const un_r_explicit[] = {
    "The file may not be able to answer this. If it has no `{col}` column, does not cover "
    "{month} (the month lies outside the dates the file spans), or has no order of a customer "
    "named exactly `{cust}`, do not answer with a number computed from a similar column, "
    "month or customer: answer exactly {\"answerable\": false}.",
    "The file may not be able to answer this: when it has no `{col}` column, does not cover "
    "{month} (the month lies outside the dates the file spans) or has no order of a customer "
    "named exactly `{cust}`, answer exactly {\"answerable\": false} rather than a number "
    "computed from a similar column, month or customer.",
};
static const char *const un_giveaways[] = {
    "does not cover", "similar column", "outside the dates", "named exactly", "may not be able",
    "tolerance", "is exactly", NULL,
};
/* Why a question would be unanswerable, which a natural prompt never
 * hints at. */
static const char *const un_defects[] = {
    "no such column", "missing column", "may be missing", "might not", "not in the file", NULL,
};
/* The value-bearing conventions ("{}" is the param's value). */
static const char *const un_states_col[] = {"`{}`", NULL};
static const char *const un_states_cust[] = {"{}", NULL};
static const struct vat_convention un_conventions[] = {
    {"column", un_states_col},
    {"customer", un_states_cust},
    {NULL, NULL},
};
static const char *const un_answer_columns[] = {"customer", "ordered_on", NULL};

static const struct vat_param un_params[] = {
    {.name = "rows_min", .type = VAT_PARAM_INT, .def = 20, .min = 12, .max = 2000,
     .doc = "fewest data rows in a fixture", .role = VAT_PARAM_ROWS},
    {.name = "rows_max", .type = VAT_PARAM_INT, .def = 60, .min = 12, .max = 2000,
     .doc = "most data rows in a fixture", .role = VAT_PARAM_ROWS},
    {.name = "customers_min", .type = VAT_PARAM_INT, .def = 4, .min = 3, .max = UN_MAX_CUSTOMERS,
     .doc = "fewest distinct customers (two of them share a name's first part)"},
    {.name = "customers_max", .type = VAT_PARAM_INT, .def = 7, .min = 3, .max = UN_MAX_CUSTOMERS,
     .doc = "most distinct customers"},
    {.name = "months_min", .type = VAT_PARAM_INT, .def = 3, .min = 2, .max = UN_MAX_MONTHS,
     .doc = "fewest calendar months the orders span"},
    {.name = "months_max", .type = VAT_PARAM_INT, .def = 6, .min = 2, .max = UN_MAX_MONTHS,
     .doc = "most calendar months the orders span"},
    {.name = "control_ratio", .type = VAT_PARAM_REAL, .def = 0.5, .min = 0.5, .max = 1.0,
     .doc = "share of tasks that are answerable controls (never fewer than half)"},
    {0},
};

/* What the generator planted, for confirm's cross-check. */
struct un_priv {
    bool answerable;
    int64_t cents; /* the asked total when answerable, in hundredths */
};

/* ---- which task is what ---------------------------------------------------- */

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

/* Whether task index i is an answerable control.  With R = round(1000 *
 * ratio), the first n tasks hold exactly ceil(n R / 1000) controls: index
 * 0 is one, every prefix is at least half controls when ratio >= 0.5, and
 * the rule is integer arithmetic, so it cannot differ between machines.
 * *before gets how many tasks of the same role precede i, which makes the
 * kinds take turns within each role. */
static bool un_is_control(uint32_t i, double ratio, uint64_t *before)
{
    uint64_t r = (uint64_t)(ratio * 1000.0 + 0.5);
    if (r > 1000)
        r = 1000;
    uint64_t ctl_before = ceil_div((uint64_t)i * r, 1000);
    bool ctl = ceil_div(((uint64_t)i + 1) * r, 1000) > ctl_before;
    *before = ctl ? ctl_before : (uint64_t)i - ctl_before;
    return ctl;
}

/* ---- generation ------------------------------------------------------------- */

struct un_row {
    int cust;
    int month; /* index into the spanned months */
    int32_t day;
    int64_t asked, similar; /* hundredths */
    size_t seq;             /* draw order, the tie-break of cmp_row */
};

/* A total order (by day, then draw order), so rows of one day keep their
 * order whatever the libc's qsort does with ties. */
static int cmp_row(const void *a, const void *b)
{
    const struct un_row *x = a, *y = b;
    if (x->day != y->day)
        return (x->day > y->day) - (x->day < y->day);
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Draws one order's asked and near-miss measures, in hundredths. */
static void un_values(struct vat_rng *r, int m, int64_t *asked, int64_t *similar)
{
    static const int64_t discount_pct[] = {0, 5, 10, 10, 15, 20, 25};
    static const int64_t tax_bp[] = {500, 725, 850, 1000, 2000}; /* hundredths of a percent */
    int64_t base, a, b;
    switch (m) {
    case M_NET:
        base = vat_gen_cents(r, 2000, vat_rng_chance(r, 0.8) ? 60000 : 300000);
        a = vat_rng_range(r, 0, 20);
        *similar = base;
        *asked = base - (base * a + 50) / 100;
        break;
    case M_SHIPPING:
        a = vat_rng_range(r, 50, 4000); /* kg in hundredths */
        b = vat_rng_range(r, 80, 250);  /* cents per kg */
        *similar = a;
        *asked = 499 + (a * b + 50) / 100;
        break;
    case M_DISCOUNT:
        base = vat_gen_cents(r, 2000, 200000);
        a = discount_pct[vat_rng_below(r, sizeof discount_pct / sizeof discount_pct[0])];
        *similar = a * 100;
        *asked = (base * a + 50) / 100;
        break;
    case M_TAX:
        base = vat_gen_cents(r, 2000, 200000);
        a = tax_bp[vat_rng_below(r, sizeof tax_bp / sizeof tax_bp[0])];
        *similar = a;
        *asked = (base * a + 5000) / 10000;
        break;
    default: /* M_UNITS */
        a = vat_rng_range(r, 1, 40);
        b = vat_rng_chance(r, 0.3) ? vat_rng_range(r, 1, a) : 0;
        *similar = a * 100;
        *asked = (a - b) * 100;
        break;
    }
}

static void un_fmt_measure(const struct un_measure *m, int64_t v, char *out, size_t cap)
{
    if (m->integer)
        snprintf(out, cap, "%lld", (long long)(v / 100));
    else
        vat_fmt_cents(v, out, cap);
}

/* The question's answer as JSON from a total in hundredths. */
static json_t *un_total_json(bool integer, int64_t v)
{
    return integer ? json_integer((json_int_t)(v / 100)) : json_real((double)v / 100.0);
}

static json_t *un_spec(bool answerable, bool integer)
{
    json_t *s = json_object();
    json_object_set_new(s, "checker", json_string("abstain"));
    json_object_set_new(s, "answerable", json_boolean(answerable));
    json_object_set_new(s, "abstention", json_pack("{s:b}", "answerable", 0));
    json_object_set_new(s, "shape", json_string("number"));
    json_object_set_new(s, "integer", json_boolean(integer));
    json_object_set_new(s, "rel_tol", json_real(UN_REL_TOL));
    json_object_set_new(s, "abs_tol", json_real(UN_ABS_TOL));
    return s;
}

/* The nc customers' names and regions: 0 is the one asked about, 1
 * shares its name's first part (the near miss), the others have names of
 * their own.  0, or -1 when the word lists are too short. */
static int un_customers(struct vat_rng *r, long nc, char cust[][64], const char **cregion)
{
    const char *heads[UN_MAX_CUSTOMERS], *tails[2];
    size_t nh = vat_gen_distinct(r, "company_head", heads, (size_t)nc - 1);
    if (nh + 1 < (size_t)nc || vat_gen_distinct(r, "company_tail", tails, 2) < 2)
        return -1;
    const char *const *region_words;
    size_t nregions = 0;
    region_words = vat_words("region", &nregions);
    for (long i = 0; i < nc; i++) {
        if (i < 2) {
            snprintf(cust[i], sizeof cust[i], "%s %s", heads[0], tails[i]);
        } else {
            size_t ntails = 0;
            const char *const *tw = vat_words("company_tail", &ntails);
            snprintf(cust[i], sizeof cust[i], "%s %s", heads[i - 1],
                     tw[vat_rng_below(r, (uint32_t)ntails)]);
        }
        cregion[i] = region_words[vat_rng_below(r, (uint32_t)nregions)];
    }
    return 0;
}

/* The file's rows into c: the header, whose measure columns are the near
 * miss always and the asked one unless it is the missing part (their
 * order drawn), then each order. */
static void un_csv(struct vat_rng *r, int side, const struct un_measure *ms, bool no_column,
                   const struct un_row *rows, size_t n, char cust[][64],
                   const char *const *cregion, struct vat_csv *c)
{
    /* Measure columns: the near miss always, the asked one unless it is
     * the missing part; their order varies. */
    bool asked_first = vat_rng_chance(r, 0.5);
    vat_csv_row_begin(c);
    for (int j = 0; j < UN_NFIXED; j++)
        vat_csv_add(c, un_fixed[j]);
    if (asked_first && !no_column)
        vat_csv_add(c, ms->asked);
    vat_csv_add(c, ms->similar);
    if (!asked_first && !no_column)
        vat_csv_add(c, ms->asked);
    long id = (long)vat_rng_range(r, 100000, 800000);
    char buf[32], date[11];
    for (size_t p = 0; p < n; p++) {
        id += (long)vat_rng_range(r, 1, 6);
        id = vat_side_next_id(side, "SO-", 6, id);
        vat_csv_row_begin(c);
        vat_csv_addf(c, "SO-%06ld", id);
        vat_csv_add(c, vat_fmt_date(rows[p].day, date));
        vat_csv_add(c, cust[rows[p].cust]);
        vat_csv_add(c, cregion[rows[p].cust]);
        if (asked_first && !no_column) {
            un_fmt_measure(ms, rows[p].asked, buf, sizeof buf);
            vat_csv_add(c, buf);
        }
        un_fmt_measure(ms, rows[p].similar, buf, sizeof buf);
        vat_csv_add(c, buf);
        if (!asked_first && !no_column) {
            un_fmt_measure(ms, rows[p].asked, buf, sizeof buf);
            vat_csv_add(c, buf);
        }
    }
}

static int un_generate(struct vat_task *t, struct vat_rng *r, struct vat_err *e)
{
    long rmin = vat_task_int(t, "rows_min"), rmax = vat_task_int(t, "rows_max");
    long cmin = vat_task_int(t, "customers_min"), cmax = vat_task_int(t, "customers_max");
    long mmin = vat_task_int(t, "months_min"), mmax = vat_task_int(t, "months_max");
    uint64_t before;
    bool control = un_is_control(t->index, vat_task_real(t, "control_ratio"), &before);
    enum un_kind kind = (enum un_kind)(before % UN_NKINDS);
    const struct un_measure *ms = &un_measures[vat_rng_below(r, UN_NMEASURES)];
    int mi = (int)(ms - un_measures);

    /* Customers: 0 is the one asked about, 1 shares its name's first part
     * (the near miss), the others have names of their own. */
    long nc = vat_rng_range(r, cmin, cmax);
    if (nc > UN_MAX_CUSTOMERS)
        nc = UN_MAX_CUSTOMERS;
    char cust[UN_MAX_CUSTOMERS][64];
    const char *cregion[UN_MAX_CUSTOMERS];
    if (un_customers(r, nc, cust, cregion) != 0)
        return vat_err_set(e, "%s: the company word lists are too short", t->id);

    /* The months the orders span, within one year. */
    long nm = vat_rng_range(r, mmin, mmax);
    if (nm > UN_MAX_MONTHS)
        nm = UN_MAX_MONTHS;
    int year = (int)vat_rng_range(r, 2021, 2024);
    int m0 = (int)vat_rng_range(r, 1, 12 - nm + 1);
    int k = (int)vat_rng_below(r, (uint32_t)nm);
    if (control && kind == K_PERIOD)
        k = vat_rng_chance(r, 0.5) ? 0 : (int)nm - 1; /* a month at the edge */
    int ask_year = year;
    if (!control && kind == K_PERIOD)
        ask_year = vat_rng_chance(r, 0.5) ? year + 1 : year - 1;
    bool no_column = !control && kind == K_COLUMN;
    bool no_customer = !control && kind == K_ENTITY;

    /* Rows: two of the customer the trap reads in the month it reads, one
     * of the near-miss customer beside them, one in every month so the
     * span has no gap; the rest at random. */
    long nl = vat_rng_range(r, rmin, rmax);
    size_t n = nl < nm + 4 ? (size_t)nm + 4 : (size_t)nl;
    struct un_row *rows = vat_xcalloc(n, sizeof *rows);
    int target = no_customer ? 1 : 0;
    int first_cust = no_customer ? 1 : 0;
    size_t p = 0;
    const int planted[3] = {target, target, target == 0 ? 1 : 2};
    for (; p < 3; p++) {
        rows[p].cust = planted[p];
        rows[p].month = k;
    }
    for (int j = 0; j < nm; j++, p++) {
        rows[p].cust = first_cust + (int)vat_rng_below(r, (uint32_t)(nc - first_cust));
        rows[p].month = j;
    }
    for (; p < n; p++) {
        rows[p].cust = first_cust + (int)vat_rng_below(r, (uint32_t)(nc - first_cust));
        rows[p].month = (int)vat_rng_below(r, (uint32_t)nm);
    }
    struct un_priv *pv = vat_xcalloc(1, sizeof *pv);
    pv->answerable = control;
    for (p = 0; p < n; p++) {
        int mm = m0 + rows[p].month;
        rows[p].day = vat_month_first_day(year, mm) +
                      (int32_t)vat_rng_below(r, (uint32_t)vat_month_days(year, mm));
        un_values(r, mi, &rows[p].asked, &rows[p].similar);
        rows[p].seq = p;
        if (control && rows[p].cust == 0 && rows[p].month == k)
            pv->cents += rows[p].asked;
    }
    qsort(rows, n, sizeof *rows, cmp_row);

    struct vat_csv c = VAT_CSV_INIT;
    un_csv(r, t->side, ms, no_column, rows, n, cust, cregion, &c);
    free(rows);
    t->priv = pv;
    t->priv_free = free;
    if (vat_an_write_csv(t, &c, ".csv", "main", e) < 0) {
        vat_csv_release(&c);
        return -1;
    }

    const char *asked_cust = cust[0];
    char month[8], from[11], to[11];
    snprintf(month, sizeof month, "%04d-%02d", ask_year, m0 + k);
    vat_fmt_date(vat_month_first_day(ask_year, m0 + k), from);
    vat_fmt_date(vat_month_first_day(ask_year, m0 + k) + vat_month_days(ask_year, m0 + k) - 1, to);

    struct vat_buf b = VAT_BUF_INIT;
    const char *okv[] = {"topic", "[[a customer's orders|our sales figures|a client "
                                  "account]]", NULL};
    vat_prompt_open(&b, t, okv);
    if (vat_prompt_natural(t)) {
        /* Natural style: the question and the abstention value;
         * what would make it unanswerable is left to the reader. */
        char when[32];
        snprintf(when, sizeof when, "%s %d", vat_month_name((int)strtol(month + 5, NULL, 10)),
                 ask_year);
        VAT_PROMPT_PUT(&b, t, 'd', un_d_natural, NULL);
        vat_buf_puts(&b, "\n\n");
        const char *kv[] = {"col", ms->asked, "meaning", ms->meaning, "cust", asked_cust,
                            "when", when, NULL};
        VAT_PROMPT_PUT(&b, t, 'q', un_q_natural, kv);
        vat_buf_puts(&b, "\n\n");
        vat_prompt_answer(&b, t, ms->integer
                                     ? "[[the total as one JSON number (a whole number)|one "
                                       "JSON number, the total (a whole number)|the total, a "
                                       "whole JSON number]], or exactly {\"answerable\": "
                                       "false} [[if this file cannot tell|if the file can't "
                                       "answer it|when the data cannot say]]"
                                     : "[[the total as one JSON number|one JSON number, the "
                                       "total|the total as a single JSON number]], or exactly "
                                       "{\"answerable\": false} [[if this file cannot "
                                       "tell|if the file can't answer it|when the data cannot "
                                       "say]]");
        vat_buf_puts(&b, "\n\n");
    } else {
        VAT_PROMPT_PUT(&b, t, 'd', un_d_explicit, NULL);
        vat_buf_puts(&b, "\n\n");
        const char *qkv[] = {"col",  ms->asked, "meaning", ms->meaning, "cust", asked_cust,
                             "month", month,   "from",    from,        "to",   to,
                             NULL};
        VAT_PROMPT_PUT(&b, t, 'q', un_q_explicit, qkv);
        vat_buf_printf(&b, " Sum over the rows whose `customer` is exactly `%s`.\n\n",
                       asked_cust);
        VAT_PROMPT_PUT(&b, t, 'r', un_r_explicit, qkv);
        vat_buf_puts(&b, "\n\n");
        vat_prompt_answer(&b, t, ms->integer
                                     ? "otherwise the total as a JSON number, a whole number "
                                       "written like <total> with no quotes"
                                     : "otherwise the total as a JSON number, written like "
                                       "<total> with no quotes, currency sign or thousands "
                                       "separator; sum exactly, the total has at most two "
                                       "decimals");
        vat_buf_putc(&b, ' ');
        vat_prompt_tolerance(&b, t, UN_REL_TOL, UN_ABS_TOL);
        vat_buf_puts(&b, "\n\n");
    }
    vat_an_prompt_csv(&b, t, 0, &c);
    t->prompt = vat_buf_detach(&b);
    vat_csv_release(&c);

    t->params = json_pack("{s:b, s:s, s:s, s:s, s:s, s:s, s:s}", "answerable", control, "kind",
                          control ? un_control_name[kind] : un_kind_name[kind], "column",
                          ms->asked, "customer", asked_cust, "month", month, "from", from, "to",
                          to);
    t->spec = un_spec(control, ms->integer);
    return 0;
}

/* ---- reading the file back ----------------------------------------------------- */

struct un_question {
    const char *column, *customer, *month;
};

static int un_question(const struct vat_task *t, struct un_question *q, struct vat_err *e)
{
    q->column = json_string_value(json_object_get(t->params, "column"));
    q->customer = json_string_value(json_object_get(t->params, "customer"));
    q->month = json_string_value(json_object_get(t->params, "month"));
    if (!q->column || !q->customer || vat_parse_month(q->month, NULL, NULL) != 0)
        return vat_err_set(e, "%s: params lack the question's column, customer or month", t->id);
    return 0;
}

/* Reads the fixture and checks its fixed columns, its row widths and its
 * dates.  0, or -1 with e set (c released). */
static int un_read(const struct vat_task *t, struct vat_csv *c, struct vat_err *e)
{
    const char *rel = t->fixture[0].path;
    if (vat_csv_read(c, t->root, rel, e) != 0)
        return -1;
    size_t w = c->nrows ? c->row[0].n : 0;
    if (w < UN_NFIXED + 1) {
        vat_csv_release(c);
        return vat_err_set(e, "%s: '%s' has %zu header columns, expected at least %d", t->id,
                           rel, w, UN_NFIXED + 1);
    }
    for (int j = 0; j < UN_NFIXED; j++) {
        if (strcmp(c->row[0].cell[j], un_fixed[j]) != 0) {
            vat_err_set(e, "%s: '%s' header column %d is '%s', expected '%s'", t->id, rel, j + 1,
                        c->row[0].cell[j], un_fixed[j]);
            vat_csv_release(c);
            return -1;
        }
    }
    for (size_t i = 1; i < c->nrows; i++) {
        int32_t day;
        if (c->row[i].n != w || vat_parse_date(c->row[i].cell[C_DATE], &day) != 0) {
            vat_csv_release(c);
            return vat_err_set(e, "%s: '%s' record %zu is not %zu cells with a YYYY-MM-DD date",
                               t->id, rel, i + 1, w);
        }
    }
    if (c->nrows < 2) {
        vat_csv_release(c);
        return vat_err_set(e, "%s: '%s' has no data rows", t->id, rel);
    }
    return 0;
}

static bool un_in_month(const char *date, const char *month)
{
    return strncmp(date, month, 7) == 0 && date[7] == '-';
}

/* Sums column col over the rows of customer in month (hundredths).  0 or
 * -1 with e set when a cell is not a number of the column's kind. */
static int un_sum(const struct vat_task *t, const struct vat_csv *c, int col,
                  const char *customer, const char *month, int64_t *sum, long *nrows,
                  struct vat_err *e)
{
    *sum = 0;
    *nrows = 0;
    for (size_t i = 1; i < c->nrows; i++) {
        if (strcmp(vat_csv_get(c, i, C_CUSTOMER), customer) != 0 ||
            !un_in_month(vat_csv_get(c, i, C_DATE), month))
            continue;
        int64_t v;
        const char *cell = vat_csv_get(c, i, (size_t)col);
        if (vat_parse_cents(cell, &v) != 0)
            return vat_err_set(e, "%s: '%s' record %zu: '%s' is not a decimal", t->id,
                               t->fixture[0].path, i + 1, cell);
        *sum += v;
        ++*nrows;
    }
    return 0;
}

/* What the file says about the question's three parts. */
struct un_facts {
    int col;        /* the asked column, or -1 */
    bool covered;   /* the month lies within the file's first and last month */
    bool present;   /* the customer has at least one order */
    char first[8], last[8];
};

static void un_facts(const struct vat_csv *c, const struct un_question *q, struct un_facts *f)
{
    f->col = vat_csv_col(c, 0, q->column);
    f->present = false;
    snprintf(f->first, sizeof f->first, "%.7s", vat_csv_get(c, 1, C_DATE));
    snprintf(f->last, sizeof f->last, "%.7s", vat_csv_get(c, 1, C_DATE));
    for (size_t i = 1; i < c->nrows; i++) {
        const char *d = vat_csv_get(c, i, C_DATE);
        if (strncmp(d, f->first, 7) < 0)
            snprintf(f->first, sizeof f->first, "%.7s", d);
        if (strncmp(d, f->last, 7) > 0)
            snprintf(f->last, sizeof f->last, "%.7s", d);
        if (strcmp(vat_csv_get(c, i, C_CUSTOMER), q->customer) == 0)
            f->present = true;
    }
    f->covered = strcmp(q->month, f->first) >= 0 && strcmp(q->month, f->last) <= 0;
}

static bool un_integer(const struct vat_task *t)
{
    return json_is_true(json_object_get(t->spec, "integer"));
}

static int un_reference(struct vat_task *t, struct vat_err *e)
{
    struct un_question q;
    struct vat_csv c = VAT_CSV_INIT;
    struct un_facts f;
    if (un_question(t, &q, e) != 0 || un_read(t, &c, e) != 0)
        return -1;
    un_facts(&c, &q, &f);
    bool answerable = f.col >= 0 && f.covered && f.present;
    json_object_set_new(t->spec, "answerable", json_boolean(answerable));
    if (!answerable) {
        vat_csv_release(&c);
        json_object_del(t->spec, "expected");
        free(t->gold);
        t->gold = vat_xstrdup(UN_ABSTENTION);
        return 0;
    }
    int64_t sum;
    long nrows;
    int rc = un_sum(t, &c, f.col, q.customer, q.month, &sum, &nrows, e);
    vat_csv_release(&c);
    if (rc != 0)
        return -1;
    if (un_integer(t) && sum % 100 != 0)
        return vat_err_set(e, "%s: '%s' holds a fraction in the whole-number column '%s'", t->id,
                           t->fixture[0].path, q.column);
    vat_an_set_gold(t, un_total_json(un_integer(t), sum));
    return 0;
}

/* ---- confirm: the same three facts and the total as SQL ------------------------ */

/* Runs a one-value query with up to two text parameters; the value is
 * returned as an integer (NULL as 0).  0 or -1 with e set. */
static int un_sql_int(sqlite3 *db, const char *sql, const char *p1, const char *p2,
                      int64_t *out, bool *is_null, struct vat_err *e)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return vat_err_set(e, "sql: %s", sqlite3_errmsg(db));
    if (p1)
        sqlite3_bind_text(st, 1, p1, -1, SQLITE_TRANSIENT);
    if (p2)
        sqlite3_bind_text(st, 2, p2, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        vat_err_set(e, "sql: %s", rc == SQLITE_DONE ? "no row" : sqlite3_errmsg(db));
        sqlite3_finalize(st);
        return -1;
    }
    if (is_null)
        *is_null = sqlite3_column_type(st, 0) == SQLITE_NULL;
    *out = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return 0;
}

static int un_confirm(const struct vat_task *t, struct vat_err *e)
{
    struct un_question q;
    if (un_question(t, &q, e) != 0)
        return -1;
    sqlite3 *db;
    struct vat_err qe = {{0}};
    if (vat_an_csv_sqlite(t, 0, "orders", NULL, 0, &db, &qe) != 0)
        return vat_err_set(e, "%s: confirm: %s", t->id, qe.msg);
    int64_t has_col = 0, covered = 0, present = 0, sum = 0;
    bool null_sum = true;
    int rc = un_sql_int(db, "SELECT count(*) FROM pragma_table_info('orders') WHERE name = ?1",
                        q.column, NULL, &has_col, NULL, &qe);
    if (rc == 0)
        rc = un_sql_int(db,
                        "SELECT ?1 BETWEEN substr(min(ordered_on), 1, 7) AND "
                        "substr(max(ordered_on), 1, 7) FROM orders",
                        q.month, NULL, &covered, NULL, &qe);
    if (rc == 0)
        rc = un_sql_int(db, "SELECT count(*) FROM orders WHERE customer = ?1", q.customer, NULL,
                        &present, NULL, &qe);
    bool answerable = rc == 0 && has_col > 0 && covered && present > 0;
    if (rc == 0 && answerable) {
        char *sql = sqlite3_mprintf("SELECT sum(CAST(round(CAST(\"%w\" AS REAL) * 100) AS "
                                    "INTEGER)) FROM orders WHERE customer = ?1 AND "
                                    "substr(ordered_on, 1, 8) = ?2 || '-'",
                                    q.column);
        rc = un_sql_int(db, sql, q.customer, q.month, &sum, &null_sum, &qe);
        sqlite3_free(sql);
        if (null_sum)
            sum = 0;
    }
    vat_an_csv_done(db);
    if (rc != 0)
        return vat_err_set(e, "%s: confirm: %s", t->id, qe.msg);

    const char *how = "sql over the loaded csv";
    if (!answerable) {
        if (strcmp(t->gold, UN_ABSTENTION) != 0)
            return vat_err_set(e, "%s: %s finds the question unanswerable (column %s, month "
                               "%s, customer %s), but gold is %s",
                               t->id, how, has_col ? "present" : "absent",
                               covered ? "covered" : "outside", present ? "present" : "absent",
                               t->gold);
    } else {
        json_t *v = un_total_json(un_integer(t), sum);
        rc = vat_an_confirm_gold(t, v, how, 0, 0, e);
        json_decref(v);
        if (rc != 0)
            return -1;
    }
    const struct un_priv *pv = t->priv;
    if (!pv)
        return 0;
    if (pv->answerable != answerable)
        return vat_err_set(e, "%s: the generator planted an %s question, the file reads %s",
                           t->id, pv->answerable ? "answerable" : "unanswerable",
                           answerable ? "answerable" : "unanswerable");
    if (answerable && pv->cents != sum)
        return vat_err_set(e, "%s: the generator planted a total of %lld hundredths, the file "
                           "sums to %lld",
                           t->id, (long long)pv->cents, (long long)sum);
    return 0;
}

/* ---- the trap: substitute the most similar part -------------------------------- */

/* How many '_'-separated words two column names share. */
static int shared_words(const char *a, const char *b)
{
    int n = 0;
    char wa[64], wb[64];
    for (const char *p = a; *p;) {
        size_t la = strcspn(p, "_");
        snprintf(wa, sizeof wa, "%.*s", (int)la, p);
        for (const char *s = b; *s;) {
            size_t lb = strcspn(s, "_");
            snprintf(wb, sizeof wb, "%.*s", (int)lb, s);
            if (la && strcmp(wa, wb) == 0)
                n++;
            s += lb + (s[lb] == '_');
        }
        p += la + (p[la] == '_');
    }
    return n;
}

/* How many leading space-separated words two names share. */
static int shared_prefix_words(const char *a, const char *b)
{
    int n = 0;
    while (*a && *b) {
        size_t la = strcspn(a, " "), lb = strcspn(b, " ");
        if (la != lb || strncmp(a, b, la) != 0)
            break;
        n++;
        a += la + (a[la] == ' ');
        b += lb + (b[lb] == ' ');
    }
    return n;
}

static int un_trap(struct vat_task *t, struct vat_err *e)
{
    if (json_is_true(json_object_get(t->spec, "answerable"))) {
        free(t->trap);
        t->trap = vat_xstrdup(UN_ABSTENTION);
        return 0;
    }
    struct un_question q;
    struct vat_csv c = VAT_CSV_INIT;
    struct un_facts f;
    if (un_question(t, &q, e) != 0 || un_read(t, &c, e) != 0)
        return -1;
    un_facts(&c, &q, &f);

    /* The column sharing most words with the asked one. */
    int col = f.col;
    for (size_t j = UN_NFIXED, best = 0; f.col < 0 && j < c.row[0].n; j++) {
        size_t s = (size_t)shared_words(q.column, c.row[0].cell[j]);
        if (s > best)
            best = s, col = (int)j;
    }
    /* The same month of the year the file covers. */
    char month[8];
    snprintf(month, sizeof month, "%s", q.month);
    if (!f.covered) {
        month[0] = 0;
        for (size_t i = 1; i < c.nrows; i++) {
            const char *d = vat_csv_get(&c, i, C_DATE);
            if (strncmp(d + 5, q.month + 5, 2) == 0) {
                snprintf(month, sizeof month, "%.7s", d);
                break;
            }
        }
    }
    /* The customer whose name shares most leading words, first by byte
     * order among equals. */
    const char *cust = f.present ? q.customer : NULL;
    int best = 0;
    for (size_t i = 1; !f.present && i < c.nrows; i++) {
        const char *name = vat_csv_get(&c, i, C_CUSTOMER);
        int s = shared_prefix_words(q.customer, name);
        if (s > best || (s == best && s > 0 && strcmp(name, cust) < 0))
            best = s, cust = name;
    }
    if (col < 0 || !month[0] || !cust) {
        vat_csv_release(&c);
        return vat_err_set(e, "%s: the file holds no column, month or customer similar to the "
                           "missing one",
                           t->id);
    }
    int64_t sum;
    long nrows;
    int rc = un_sum(t, &c, col, cust, month, &sum, &nrows, e);
    vat_csv_release(&c);
    if (rc != 0)
        return -1;
    if (nrows == 0)
        return vat_err_set(e, "%s: the substitute column, month or customer has no rows", t->id);
    if (un_integer(t) && sum % 100 != 0)
        return vat_err_set(e, "%s: the substitute column holds fractions", t->id);
    vat_an_set_trap(t, un_total_json(un_integer(t), sum));
    return 0;
}

const struct vat_template vat_tmpl_unanswerable = {
    .version = VAT_TEMPLATE_V1,
    .name = "unanswerable",
    .family = "probe",
    .answer_kind = "abstain",
    .trap = "Answering with the total of the most similar column, month or customer when the "
            "one asked about is absent from the file (and, on an answerable control, "
            "abstaining).",
    .summary = "A customer's monthly total of a column, or {\"answerable\": false} when the "
               "file lacks the column, the month or the customer.",
    .params = un_params,
    .default_count = 12,
    .generate = un_generate,
    .reference = un_reference,
    .confirm = un_confirm,
    .trap_answer = un_trap,
    .check = vat_check_task,
    .giveaways = un_giveaways,
    .conventions = un_conventions,
    .defects = un_defects,
    .answer_columns = un_answer_columns,
};
