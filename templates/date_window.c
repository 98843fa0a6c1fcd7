/* date_window.c — the date_window analytics template: a payments CSV
 * (payment_id, payer, method, amount, paid_at 'YYYY-MM-DD HH:MM:SS') and
 * the total amount paid from day D1 through day D2 inclusive, whole days.
 * The trap compares the timestamps with the bare dates as text (paid_at >=
 * 'D1' AND paid_at <= 'D2'), which drops every payment made on D2 after
 * the date itself, i.e. all of D2.  Every fixture holds a payment at D1
 * 00:00:00, one late on D2, sometimes one at D2 00:00:00, and one just
 * outside each bound (D1-1 23:59:59, D2+1 00:00:00), so the trap and the
 * other bound mistakes always miss.  In the program form gold
 * is SUM(amount) over date(paid_at) from D1 through D2 and the trap the
 * same bare-date comparison in SQL, both run on three variant CSVs that
 * plant the same bounds.  Exports vat_tmpl_date_window. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analytics.h"
#include "csvio.h"
#include "prompt.h"
#include "progform.h"
#include "sqlgen.h"
#include "template.h"
#include "trapmod.h"
#include "values.h"

#define DW_REL_TOL 1e-9
#define DW_ABS_TOL 1e-6
#define DW_DAY 86400

enum { C_ID, C_PAYER, C_METHOD, C_AMOUNT, C_PAID_AT, DW_NCOLS };
static const char *const dw_cols[DW_NCOLS] = {"payment_id", "payer", "method", "amount",
                                              "paid_at"};
static const char *const dw_methods[] = {"card", "bank_transfer", "direct_debit", "wallet"};

/* The question in both styles.  Natural: "from 17 to 19 January" with both
 * days included, going by the day the payment was made: conventions in
 * domain words, never the timestamps' trap. */
static const char *const dw_q_natural[] = {
    "How much did we take in payments from {from} to {to}?",
    "What was the total paid to us between {from} and {to}?",
    "Could you add up the payments we received from {from} to {to}?",
    "What's our payment total for {from} to {to}?",
    "I need the sum of the payments [[that came in|we got]] from {from} to {to}.",
    "[[For the cash report|For our bank reconciliation|For the weekly close]], how much was "
    "paid to us from {from} to {to}?",
};
static const char *const dw_q_natural_day[] = {
    "How much did we take in payments on {from}?",
    "What was the total paid to us on {from}?",
    "Could you add up the payments we received on {from}?",
    "What's our payment total for {from}?",
    "I need the sum of the payments [[that came in|we got]] on {from}.",
    "[[For the cash report|For our bank reconciliation|For the daily close]], how much was "
    "paid to us on {from}?",
};
static const char *const dw_c_natural[] = {
    "[[Go|Count]] {day}, {both}.",
    "{^both}; payments [[count|are dated]] {day} (`paid_at`).",
    "Payments [[are dated|count]] {day}, {both}.",
    "[[Please count|Count]] {day} ({both}).",
};
/* The explicit question, ways of asking it, over a range of days or one
 * day; the rules that follow it state the whole days. */
static const char *const dw_q_explicit[] = {
    "[[Question: what|What]] is the total `amount` of the payments made from {from} through "
    "{to} inclusive?",
    "What do the `amount` values of the payments made from {from} through {to} inclusive "
    "add up to?",
    "Sum `amount` over the payments made from {from} through {to} inclusive: what is the "
    "total?",
    "Compute the total `amount` of the payments made from {from} through {to} inclusive.",
    "Give the sum of `amount` over the payments made from {from} through {to} inclusive.",
};
static const char *const dw_q_explicit_day[] = {
    "[[Question: what|What]] is the total `amount` of the payments made on {from}?",
    "What do the `amount` values of the payments made on {from} add up to?",
    "Sum `amount` over the payments made on {from}: what is the total?",
    "Compute the total `amount` of the payments made on {from}.",
    "Give the sum of `amount` over the payments made on {from}.",
};
static const char *const dw_r_explicit[] = {
    "[[Both days count in full|Each of the two days counts in full|The range includes both "
    "days in full]]: [[include every payment whose `paid_at` falls on {from}, on {to} or on "
    "any day in between|every payment whose `paid_at` falls on {from}, on {to} or on a day in "
    "between is included|a payment counts when its `paid_at` falls on {from}, on {to} or on "
    "any day in between]], whatever its time of day, and [[no payment from any other day|no "
    "payment of any other day counts|payments of other days are left out]].",
};
static const char *const dw_r_explicit_day[] = {
    "[[The whole day counts|The day counts in full|All of the day counts]]: [[include every "
    "payment whose `paid_at` falls on {from}, whatever its time of day|every payment whose "
    "`paid_at` falls on {from}, whatever its time of day, is included|a payment counts when "
    "its `paid_at` falls on {from}, whatever its time of day]], and [[no payment from any "
    "other day|no payment of any other day counts|payments of other days are left out]].",
};
static const char *const dw_r_sum[] = {
    "[[Sum the amounts exactly|Sum exactly|Add the amounts up exactly]][[:|;]] [[the total is "
    "a number with at most two decimals|the total has at most two decimals|the total carries "
    "two decimals at most]].",
};
/* The columns as the data description lists them, in each style. */
static const struct vat_prompt_col dw_cols_natural[] = {
    {"payment_id", ""},
    {"payer", "[[|who paid]]"},
    {"method", "[[|how they paid]]"},
    {"amount", "[[two decimals|with two decimals|the amount paid, two decimals]]"},
    {"paid_at", "[[YYYY-MM-DD HH:MM:SS, 24-hour clock, one time zone|when it was paid, "
        "YYYY-MM-DD HH:MM:SS on a 24-hour clock, all in one time zone|the payment time, "
        "YYYY-MM-DD HH:MM:SS, 24-hour clock, a single time zone]]"},
};
static const struct vat_prompt_col dw_cols_explicit[] = {
    {"payment_id", ""},
    {"payer", "[[|the payer's name]]"},
    {"method", "[[how it was paid|the payment method]]"},
    {"amount", "[[a decimal with two places|two decimal places|the amount, with two decimal "
        "places]]"},
    {"paid_at", "[[when the payment was made, YYYY-MM-DD HH:MM:SS on a 24-hour clock; all times "
        "are in the same time zone|the payment time, YYYY-MM-DD HH:MM:SS on a 24-hour "
        "clock, every time in the same time zone|YYYY-MM-DD HH:MM:SS, the moment of "
        "payment on a 24-hour clock, one time zone for all rows]]"},
};
static const char *const dw_giveaways[] = {
    "inclusive", "in full", "whatever its time", "whole day", "any other day", "time of day",
    "tolerance", "Sum the amounts exactly", NULL,
};
/* The bound's trap, which a natural prompt never describes. */
static const char *const dw_defects[] = {
    "midnight", "00:00", "late on", "the end of the day", "timestamps include", "bare date",
    NULL,
};
static const char *const dw_answer_columns[] = {"amount", "paid_at", NULL};
/* Both days of a range included (the first three), or the whole of a one-
 * day window (the last three). */
static const char *const dw_states_inclusive[] = {
    "both days included", "including both of those days", "counting both end dates",
    "at any hour of that day", "all of that day's payments", "every payment that day",
    NULL,
};
static const char *const dw_states_day[] = {
    "by the day the payment was made", "by the day it was paid", "by payment date", NULL,
};
static const struct vat_convention dw_conventions[] = {
    {"inclusive", dw_states_inclusive},
    {"timestamp", dw_states_day},
    {NULL, NULL},
};

static const struct vat_param dw_params[] = {
    {.name = "rows_min", .type = VAT_PARAM_INT, .def = 20, .min = 8, .max = 2000,
     .doc = "fewest data rows in a fixture", .role = VAT_PARAM_ROWS},
    {.name = "rows_max", .type = VAT_PARAM_INT, .def = 120, .min = 8, .max = 2000,
     .doc = "most data rows in a fixture", .role = VAT_PARAM_ROWS},
    {.name = "window_min", .type = VAT_PARAM_INT, .def = 2, .min = 1, .max = 60,
     .doc = "fewest days from D1 through D2 (1: D1 = D2)"},
    {.name = "window_max", .type = VAT_PARAM_INT, .def = 14, .min = 1, .max = 60,
     .doc = "most days from D1 through D2"},
    {.name = "span_days", .type = VAT_PARAM_INT, .def = 60, .min = 10, .max = 730,
     .doc = "days the whole export covers, around the window"},
    {.name = "midnight_d2_chance", .type = VAT_PARAM_REAL, .def = 0.5, .min = 0, .max = 1,
     .doc = "chance of a payment at exactly D2 00:00:00"},
    {.name = "amount_max", .type = VAT_PARAM_INT, .def = 3000, .min = 20, .max = 100000,
     .doc = "largest payment, in whole currency units"},
    VAT_PROGFORM_PARAM,
    {0},
};

/* What the generator planted, for confirm's cross-check. */
struct dw_priv {
    int64_t window_cents; /* the sum of the payments drawn inside [D1, D2] */
};

/* The question and what decides it, in the task's style, for both answer
 * forms: from and to are D1 and D2 as YYYY-MM-DD (one day when equal). */
static void dw_say_question(struct vat_buf *b, struct vat_task *t, const char *from,
                            const char *to)
{
    bool day = strcmp(from, to) == 0;
    if (vat_prompt_natural(t)) {
        int32_t d1 = 0, d2 = 0;
        char from_h[32] = "", to_h[32] = "";
        if (vat_parse_date(from, &d1) == 0 && vat_parse_date(to, &d2) == 0) {
            vat_prompt_human_date(d1, from_h);
            vat_prompt_human_date(d2, to_h);
        }
        const char *kv[] = {"from", from_h, "to", to_h, NULL};
        if (day)
            VAT_PROMPT_PUT(b, t, 'q', dw_q_natural_day, kv);
        else
            VAT_PROMPT_PUT(b, t, 'q', dw_q_natural, kv);
        vat_buf_putc(b, ' ');
        const char *both = vat_prompt_phrase(t, 'c', dw_states_inclusive + (day ? 3 : 0), 3);
        const char *ckv[] = {"both", both, "day", vat_prompt_state(t, "timestamp"), NULL};
        VAT_PROMPT_PUT(b, t, 'c', dw_c_natural, ckv);
        return;
    }
    const char *kv[] = {"from", from, "to", to, NULL};
    if (day) {
        VAT_PROMPT_PUT(b, t, 'q', dw_q_explicit_day, kv);
        vat_buf_putc(b, ' ');
        VAT_PROMPT_PUT(b, t, 'r', dw_r_explicit_day, kv);
    } else {
        VAT_PROMPT_PUT(b, t, 'q', dw_q_explicit, kv);
        vat_buf_putc(b, ' ');
        VAT_PROMPT_PUT(b, t, 'r', dw_r_explicit, kv);
    }
    vat_buf_putc(b, ' ');
    VAT_PROMPT_PUT(b, t, 'r', dw_r_sum, NULL);
}

/* ---- generation ---------------------------------------------------------- */

/* Payers: people, and businesses paying invoices. */
static const struct vat_customer_mix dw_payers = {.company = 1, .person = 2};

/* A time of day in seconds: mostly business hours, some at any hour. */
static int64_t dw_time_of_day(struct vat_rng *r)
{
    if (vat_rng_chance(r, 0.75))
        return vat_rng_range(r, 8 * 3600, 20 * 3600 - 1);
    return vat_rng_range(r, 0, DW_DAY - 1);
}

struct dw_pay {
    int64_t at;
    int64_t cents;
    size_t seq; /* draw order, to keep the sort stable */
};

/* A total order: payments at the same second keep their draw order, so
 * the file does not depend on how the libc's qsort orders ties. */
static int dw_pay_cmp(const void *a, const void *b)
{
    const struct dw_pay *x = a, *y = b;
    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

static int dw_generate(struct vat_task *t, struct vat_rng *r, struct vat_err *e)
{
    long rmin = vat_task_int(t, "rows_min"), rmax = vat_task_int(t, "rows_max");
    long wmin = vat_task_int(t, "window_min"), wmax = vat_task_int(t, "window_max");
    long span = vat_task_int(t, "span_days");
    double midnight = vat_task_real(t, "midnight_d2_chance");
    int64_t max_cents = (int64_t)vat_task_int(t, "amount_max") * 100;
    if (rmax < rmin)
        rmax = rmin;
    if (wmax < wmin)
        wmax = wmin;

    int32_t width = (int32_t)vat_rng_range(r, wmin, wmax);
    /* Room on both sides of the window for the payments just outside it. */
    if (span < width + 6)
        span = width + 6;
    int32_t first = vat_date_from_civil(2022, 1, 1) + (int32_t)vat_rng_range(r, 0, 1000);
    int32_t d1 = first + (int32_t)vat_rng_range(r, 3, span - width - 3);
    int32_t d2 = d1 + width - 1;

    size_t n = (size_t)vat_rng_range(r, rmin, rmax);
    struct dw_pay *pay = vat_xcalloc(n + 5, sizeof *pay);
    size_t k = 0;
    bool at_midnight_d2 = d2 != d1 && vat_rng_chance(r, midnight);
    /* The planted bounds: D1 at midnight, late on D2, and a second either
     * side of the window. */
    pay[k++].at = (int64_t)d1 * DW_DAY;
    pay[k++].at = (int64_t)d2 * DW_DAY +
                  (vat_rng_chance(r, 0.5) ? DW_DAY - 1 : vat_rng_range(r, 23 * 3600, DW_DAY - 2));
    pay[k++].at = (int64_t)d1 * DW_DAY - 1;
    pay[k++].at = (int64_t)(d2 + 1) * DW_DAY;
    if (at_midnight_d2)
        pay[k++].at = (int64_t)d2 * DW_DAY;
    if (n < k)
        n = k;
    for (; k < n; k++) {
        /* the day, then the time: one draw per statement */
        int32_t day = first + (int32_t)vat_rng_range(r, 0, span - 1);
        pay[k].at = (int64_t)day * DW_DAY + dw_time_of_day(r);
    }
    for (k = 0; k < n; k++) {
        /* Mostly invoices of a few hundred, some large transfers. */
        int64_t hi = vat_rng_chance(r, 0.7) && max_cents > 50000 ? 50000 : max_cents;
        pay[k].cents = vat_gen_cents(r, 1000, hi);
        pay[k].seq = k;
    }
    qsort(pay, n, sizeof *pay, dw_pay_cmp);

    size_t npayers = n / 3 + 3;
    char (*payer)[64] = vat_xcalloc(npayers, sizeof *payer);
    for (size_t i = 0; i < npayers; i++)
        vat_gen_customer(r, &dw_payers, payer[i], sizeof payer[i]);

    struct vat_csv c = VAT_CSV_INIT;
    vat_csv_add_row(&c, dw_cols, DW_NCOLS);
    long id = (long)vat_rng_range(r, 200000, 700000);
    struct dw_priv *pv = vat_xcalloc(1, sizeof *pv);
    char money[32], stamp[20];
    for (size_t i = 0; i < n; i++) {
        id += (long)vat_rng_range(r, 1, 5);
        id = vat_side_next_id(t->side, "PAY-", 7, id);
        vat_csv_row_begin(&c);
        vat_csv_addf(&c, "PAY-%07ld", id);
        vat_csv_add(&c, payer[vat_rng_below(r, (uint32_t)npayers)]);
        vat_csv_add(&c, VAT_PICK(r, dw_methods));
        vat_csv_add(&c, vat_fmt_cents(pay[i].cents, money, sizeof money));
        vat_csv_add(&c, vat_fmt_timestamp(pay[i].at, stamp));
        int64_t day = pay[i].at / DW_DAY;
        if (day >= d1 && day <= d2)
            pv->window_cents += pay[i].cents;
    }
    free(payer);
    free(pay);
    t->priv = pv;
    t->priv_free = free;

    /* the window is known before the file is written: the trap modules
     * plant their copies inside it */
    char from[11], to[11];
    vat_fmt_date(d1, from);
    vat_fmt_date(d2, to);
    t->params = json_pack("{s:s, s:s, s:b, s:s, s:s}", "from", from, "to", to, "inclusive", 1,
                          "sum_of", "amount", "timestamp", "paid_at");
    if (vat_an_write_csv(t, &c, ".csv", "main", e) < 0) {
        vat_csv_release(&c);
        return -1;
    }
    struct vat_buf b = VAT_BUF_INIT;
    bool nat = vat_prompt_natural(t);
    struct vat_buf cols = VAT_BUF_INIT;
    vat_prompt_cols(&cols, t, nat ? dw_cols_natural : dw_cols_explicit,
                    VAT_N_OF(dw_cols_natural), NULL);
    const char *kv[] = {
        "topic", "[[our incoming payments|the payments we received|this period's receipts]]",
        "what", nat ? "[[a record of the payments our business received|the payments we "
                      "received{#pl}|our payment log|an export of incoming payments]]"
                    : "[[an export of payments received by a business|the payments a business "
                      "received{#pl}|a business's payment export]]",
        "unit", "payment",
        "cols", cols.data,
        NULL,
    };
    vat_prompt_open(&b, t, kv);
    vat_prompt_data(&b, t, kv);
    vat_buf_release(&cols);
    vat_buf_puts(&b, "\n\n");
    dw_say_question(&b, t, from, to);
    vat_buf_puts(&b, "\n\n");
    if (nat) {
        vat_prompt_answer(&b, t, "the total as [[one|a single]] JSON number, like 1234.5");
    } else {
        vat_prompt_answer(&b, t, "the total as a JSON number, [[for example|like|such as]] "
                                 "<total> written as digits with [[at most two decimals|two "
                                 "decimals at most]] ([[no currency sign, no quotes|without "
                                 "quotes or a currency sign]])");
        vat_buf_putc(&b, ' ');
        vat_prompt_tolerance(&b, t, DW_REL_TOL, DW_ABS_TOL);
    }
    vat_buf_puts(&b, "\n\n");
    vat_an_prompt_csv(&b, t, 0, &c);
    t->prompt = vat_buf_detach(&b);
    vat_csv_release(&c);

    struct vat_an_spec s = {.shape = "number", .rel_tol = DW_REL_TOL, .abs_tol = DW_ABS_TOL};
    t->spec = vat_an_value_spec(&s);
    return 0;
}

/* ---- gold, confirm, trap ------------------------------------------------- */

/* D1 and D2 as the prompt states them, from t->params. */
static int dw_bounds(const struct vat_task *t, const char **from, const char **to,
                     int32_t *d1, int32_t *d2, struct vat_err *e)
{
    *from = json_string_value(json_object_get(t->params, "from"));
    *to = json_string_value(json_object_get(t->params, "to"));
    if (!*from || !*to || vat_parse_date(*from, d1) != 0 || vat_parse_date(*to, d2) != 0 ||
        *d2 < *d1)
        return vat_err_set(e, "%s: params lack valid 'from' and 'to' dates", t->id);
    return 0;
}

/* Sums the amounts of the rows read back from the fixture: by calendar day
 * of paid_at within [D1, D2] (gold), or by comparing paid_at as text with
 * the bare dates, paid_at >= 'D1' AND paid_at <= 'D2' (the trap). */
static int dw_sum_file(const struct vat_task *t, bool bare_dates, int64_t *total,
                       struct vat_err *e)
{
    const char *from, *to;
    int32_t d1, d2;
    if (dw_bounds(t, &from, &to, &d1, &d2, e) != 0)
        return -1;
    struct vat_csv c = VAT_CSV_INIT;
    if (vat_an_read_csv(t, 0, dw_cols, DW_NCOLS, &c, e) != 0)
        return -1;
    *total = 0;
    for (size_t i = 1; i < c.nrows; i++) {
        int64_t cents, secs;
        const char *at = vat_csv_get(&c, i, C_PAID_AT);
        if (vat_an_csv_cents(t, 0, &c, i, C_AMOUNT, &cents, e) != 0) {
            vat_csv_release(&c);
            return -1;
        }
        if (vat_parse_timestamp(at, &secs) != 0) {
            vat_err_set(e, "%s: '%s' record %zu: paid_at '%s' is not YYYY-MM-DD HH:MM:SS",
                        t->id, t->fixture[0].path, i + 1, at);
            vat_csv_release(&c);
            return -1;
        }
        /* floor division: a day before 1970 has negative seconds */
        int64_t day = secs / DW_DAY - (secs % DW_DAY < 0);
        bool in = bare_dates ? strcmp(at, from) >= 0 && strcmp(at, to) <= 0
                             : day >= d1 && day <= d2;
        if (in)
            *total += cents;
    }
    vat_csv_release(&c);
    return 0;
}

static int dw_reference(struct vat_task *t, struct vat_err *e)
{
    int64_t cents;
    if (dw_sum_file(t, false, &cents, e) != 0)
        return -1;
    if (cents == 0)
        return vat_err_set(e, "%s: no payment falls in the window", t->id);
    vat_an_set_gold(t, json_real((double)cents / 100.0));
    return 0;
}

/* SQL over the CSV loaded into SQLite, with date(paid_at) BETWEEN the two
 * days and integer-cent sums, so the total must equal gold bit for bit;
 * then the generator's planted window total. */
static int dw_confirm(const struct vat_task *t, struct vat_err *e)
{
    static const char *const types[DW_NCOLS] = {"TEXT", "TEXT", "TEXT", "REAL", "TEXT"};
    const char *from, *to;
    int32_t d1, d2;
    if (dw_bounds(t, &from, &to, &d1, &d2, e) != 0)
        return -1;
    char sql[256];
    /* from and to passed vat_parse_date: ten digits and dashes, no quotes */
    snprintf(sql, sizeof sql,
             "SELECT COALESCE(SUM(CAST(round(amount * 100) AS INTEGER)), 0) / 100.0 "
             "FROM payments WHERE date(paid_at) BETWEEN '%s' AND '%s'",
             from, to);
    struct vat_an_query q = {.table = "payments", .types = types, .sql = sql,
                             .kind = VAT_AN_NUMBER};
    int rc = vat_an_confirm_query(t, &q, 0, 0, e);
    /* planted refunds (sign_convention) take off what the generator
     * planted; the SQL derivation above still stands */
    if (rc != 0 || !t->priv || (t->trapmods & VAT_TM_SIGN))
        return rc;
    const struct dw_priv *pv = t->priv;
    return vat_an_confirm_value(t, json_real((double)pv->window_cents / 100.0),
                                "the generator's planted total", 0, 0, e);
}

static int dw_trap(struct vat_task *t, struct vat_err *e)
{
    int64_t cents;
    if (dw_sum_file(t, true, &cents, e) != 0)
        return -1;
    return vat_an_trap_from(t, json_real((double)cents / 100.0));
}

/* ---- the program form ------------------------------------------------------ */

static const char *const dw_types[DW_NCOLS] = {"TEXT", "TEXT", "TEXT", "REAL", "TEXT"};
static const char *const dw_tables[] = {"payments", "payment_export", "received_payments",
                                        "payment_log", "incoming_payments"};
static const char *const dw_outs[] = {"total", "window_total", "total_paid", "amount_total",
                                      "paid_total"};

/* D1 and D2 from t->params ("" when absent: the value form set them). */
static const char *dw_param(const struct vat_task *t, const char *key)
{
    const char *s = json_string_value(json_object_get(t->params, key));
    return s ? s : "";
}

static char *dw_pf_question(struct vat_task *t)
{
    struct vat_buf b = VAT_BUF_INIT;
    dw_say_question(&b, t, dw_param(t, "from"), dw_param(t, "to"));
    return vat_buf_detach(&b);
}

static char *dw_pf_shape(struct vat_task *t, const struct vat_pf_names *n)
{
    const char *kv[] = {"out", n->out, NULL};
    if (vat_prompt_natural(t))
        return vat_prompt_text(t, 's',
                               "[[Return|It should return|I'd like]] one row with one column, "
                               "`{out}` (the total); a payment [[without an amount|with no "
                               "amount]] adds nothing.",
                               kv);
    return vat_prompt_text(t, 's',
                           "[[It must return|The result must be]] [[exactly one row with one "
                           "column|a single row of a single column|one row and one column, "
                           "no more]], `{out}` ([[the total, a number|the total as a "
                           "number|a number: the total]]); [[a blank `amount` adds "
                           "nothing|a blank `amount` counts for nothing|an empty `amount` "
                           "adds nothing to it]].",
                           kv);
}

/* Gold reads the calendar day of paid_at (date() drops the time); the
 * trap compares the timestamp text with the bare dates. */
static char *dw_pf_query(const struct vat_task *t, const struct vat_pf_names *n, bool bare)
{
    const char *from = dw_param(t, "from"), *to = dw_param(t, "to");
    struct vat_buf b = VAT_BUF_INIT;
    vat_buf_printf(&b, "SELECT SUM(amount) AS %s\nFROM %s\nWHERE ", n->out, n->table);
    if (bare) {
        vat_buf_puts(&b, "paid_at >= ");
        vat_sqlgen_put_literal(&b, from);
        vat_buf_puts(&b, " AND paid_at <= ");
        vat_sqlgen_put_literal(&b, to);
    } else if (strcmp(from, to) == 0) {
        vat_buf_puts(&b, "date(paid_at) = ");
        vat_sqlgen_put_literal(&b, from);
    } else {
        vat_buf_puts(&b, "date(paid_at) >= ");
        vat_sqlgen_put_literal(&b, from);
        vat_buf_puts(&b, " AND date(paid_at) <= ");
        vat_sqlgen_put_literal(&b, to);
    }
    return vat_buf_detach(&b);
}

static char *dw_pf_gold(const struct vat_task *t, const struct vat_pf_names *n)
{
    return dw_pf_query(t, n, false);
}

/* The named mistake: paid_at <= 'D2' as text, which drops all of D2. */
static char *dw_pf_trap(const struct vat_task *t, const struct vat_pf_names *n)
{
    return dw_pf_query(t, n, true);
}

/* Variant k: the task's window [D1, D2] over new payments.  Every variant
 * has a payment at D1 00:00:00 and one a second before it, one at D2+1
 * 00:00:00 and one on D2 after midnight (the trap drops it; a bound one
 * day off, or exclusive, takes or drops one of them), and blank payer and
 * method cells.  Variant 1: the D2 payment at 23:59:59, and no payment on
 * the days strictly inside the window (only the bounds qualify); variant
 * 2: a payment at D2 00:00:00 (when D2 is not D1) and one of 0.01 at D1
 * 00:00:00; variant 3: a payment at D1 23:59:59 with a blank amount, and
 * the largest amount on D2 (boundary values). */
static int dw_pf_variant(const struct vat_task *t, struct vat_rng *r, int k, struct vat_csv *c,
                         struct vat_err *e)
{
    const char *from, *to;
    int32_t d1, d2;
    if (dw_bounds(t, &from, &to, &d1, &d2, e) != 0)
        return -1;
    int64_t max_cents = (int64_t)vat_task_int(t, "amount_max") * 100;
    int64_t hi = max_cents > 50000 ? 50000 : max_cents;
    size_t extra = (size_t)vat_rng_range(r, 8, 20);
    struct dw_pay *pay = vat_xcalloc(extra + 6, sizeof *pay);
    size_t n = 0;
    pay[n++].at = (int64_t)d1 * DW_DAY;
    pay[n++].at = (int64_t)d1 * DW_DAY - 1;
    pay[n++].at = (int64_t)(d2 + 1) * DW_DAY;
    size_t late = n;
    pay[n++].at = (int64_t)d2 * DW_DAY + (k == 1 ? DW_DAY - 1 : vat_rng_range(r, 1, DW_DAY - 1));
    if (k == 2 && d2 != d1)
        pay[n++].at = (int64_t)d2 * DW_DAY;
    size_t blank = SIZE_MAX;
    if (k == 3) {
        blank = n;
        pay[n++].at = (int64_t)d1 * DW_DAY + DW_DAY - 1;
    }
    int32_t width = d2 - d1 + 1;
    for (size_t i = 0; i < extra; i++, n++) {
        /* ten days either side of the window; variant 1 keeps off its
         * inside (the day, then the time: one draw per statement) */
        int32_t day;
        if (k == 1) {
            int32_t off = (int32_t)vat_rng_range(r, 0, 19);
            day = off < 10 ? d1 - 10 + off : d2 + off - 9;
        } else {
            day = d1 - 10 + (int32_t)vat_rng_range(r, 0, width + 19);
        }
        pay[n].at = (int64_t)day * DW_DAY + dw_time_of_day(r);
    }
    for (size_t i = 0; i < n; i++) {
        pay[i].cents = vat_gen_cents(r, 1000, hi);
        pay[i].seq = i;
    }
    if (k == 2)
        pay[0].cents = 1;
    if (k == 3) {
        pay[late].cents = max_cents;
        pay[blank].cents = -1; /* written blank */
    }
    qsort(pay, n, sizeof *pay, dw_pay_cmp);

    size_t npayers = n / 3 + 3;
    char (*payer)[64] = vat_xcalloc(npayers, sizeof *payer);
    for (size_t i = 0; i < npayers; i++)
        vat_gen_customer(r, &dw_payers, payer[i], sizeof payer[i]);
    vat_csv_add_row(c, dw_cols, DW_NCOLS);
    long id = (long)vat_rng_range(r, 200000, 700000);
    char money[32], stamp[20];
    for (size_t i = 0; i < n; i++) {
        id += (long)vat_rng_range(r, 1, 5);
        id = vat_side_next_id(t->side, "PAY-", 7, id);
        const char *who = payer[vat_rng_below(r, (uint32_t)npayers)];
        const char *method = VAT_PICK(r, dw_methods);
        bool blank_payer = vat_rng_chance(r, 0.15);
        bool blank_method = vat_rng_chance(r, 0.15);
        vat_csv_row_begin(c);
        vat_csv_addf(c, "PAY-%07ld", id);
        vat_csv_add(c, blank_payer ? "" : who);
        vat_csv_add(c, blank_method ? "" : method);
        vat_csv_add(c, pay[i].cents < 0 ? "" : vat_fmt_cents(pay[i].cents, money, sizeof money));
        vat_csv_add(c, vat_fmt_timestamp(pay[i].at, stamp));
    }
    free(payer);
    free(pay);
    return 0;
}

static const struct vat_progform dw_progform = {
    .tables = dw_tables,
    .ntables = sizeof dw_tables / sizeof *dw_tables,
    .outs = dw_outs,
    .nouts = sizeof dw_outs / sizeof *dw_outs,
    .columns = dw_cols,
    .types = dw_types,
    .ncols = DW_NCOLS,
    .ordered = true,
    .kind = VAT_AN_NUMBER,
    .rel_tol = DW_REL_TOL,
    .abs_tol = DW_ABS_TOL,
    .nvariants = 3,
    .question = dw_pf_question,
    .shape = dw_pf_shape,
    .gold_sql = dw_pf_gold,
    .trap_sql = dw_pf_trap,
    .variant = dw_pf_variant,
};

/* The payments inside the asked window (every fixture's window holds
 * some, its bound payments at least): a copy of one moves the total, and
 * so does skipping one. */
static void dw_targets(const struct vat_task *t, const struct vat_csv *c, unsigned m, bool *is)
{
    (void)m;
    const char *from = dw_param(t, "from"), *to = dw_param(t, "to");
    int col = vat_csv_col(c, 0, "paid_at");
    for (size_t i = 1; i < c->nrows && col >= 0 && from && to; i++) {
        char day[11];
        is[i] = vat_trapmod_day(vat_csv_get(c, i, (size_t)col), day) &&
                strcmp(day, from) >= 0 && strcmp(day, to) <= 0;
    }
}

/* Payment ids are unique, amounts positive decimals. */
static const struct vat_trapmods dw_modules = {.duplicates = true,
                                               .amount = "amount",
                                               .id = "payment_id",
                                               .date = "paid_at",
                                               .lookalike = "gross_amount",
                                               .lookalike_is = "the amount before the "
                                                               "payment provider's fee",
                                               .late = true,
                                               .sign = true,
                                               .targets = dw_targets};

const struct vat_template vat_tmpl_date_window = {
    .version = VAT_TEMPLATE_V1,
    .name = "date_window",
    .family = "analytics",
    .answer_kind = "value",
    .trap = "Comparing the timestamps with the bare end date (paid_at <= 'D2'), which drops the "
            "payments made during D2.",
    .summary = "Total amount of the payments made from day D1 through day D2 inclusive.",
    .params = dw_params,
    .default_count = 12,
    .generate = dw_generate,
    .reference = dw_reference,
    .confirm = dw_confirm,
    .trap_answer = dw_trap,
    .check = vat_check_task,
    .giveaways = dw_giveaways,
    .answer_columns = dw_answer_columns,
    .progform = &dw_progform,
    .conventions = dw_conventions,
    .defects = dw_defects,
    .modules = &dw_modules,
};
