/* payments_reconciliation.c — a compound analytics template: a
 * payment processor's webhook delivery log (event_id, received_at,
 * occurred_at, customer, currency, type, status, amount) and the net
 * settled amount per customer (or per currency) over the payments made
 * from day D1 through day D2.  One question needs four mechanisms at once:
 *   - duplicates: the processor redelivers events, so an event_id can
 *     appear twice with the same payload and a later received_at; each
 *     event counts once;
 *   - status: only `settled` events count (pending, failed, declined not);
 *   - window: D1 through D2 are whole days over the occurred_at
 *     timestamps (comparing the timestamps with the bare date 'D2' as text
 *     drops every payment made during D2);
 *   - refund_sign (armed in most tasks): refunds reduce the total by their
 *     size, and the channels that record them disagree on the sign, so
 *     summing `amount` as written adds the positive ones.
 * Every fixture plants, for each armed trap, the rows that make its single
 * mistake change the answer; admission proves each trap on its own (see
 * src/admit.c) and the tables replay each under the role "trap:<name>".
 * t->trap is the answer of every armed mistake at once (the naive sum).
 * Customers pay in one currency each, so a per-currency total is a sum in
 * that currency.  In the program form gold, the combined trap
 * and each single mistake (traps_sql) are queries, and three variant CSVs
 * plant every mistake again with new customers, plus a group with no
 * qualifying row, blank cells and boundary times (pr_pf_variant).
 * Exports vat_tmpl_payments_reconciliation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analytics.h"
#include "csvio.h"
#include "jsonout.h"
#include "progform.h"
#include "prompt.h"
#include "sqlgen.h"
#include "template.h"
#include "values.h"

#define PR_REL_TOL 1e-9
#define PR_ABS_TOL 1e-6
#define PR_DAY 86400
#define PR_MAX_CUSTOMERS 12
/* Bytes a data row takes at most in the CSV (ids, two timestamps, a quoted
 * company name, the rest short): sizes fixtures for inline = "full". */
#define PR_ROW_BYTES 120

enum { C_EVENT, C_RECEIVED, C_OCCURRED, C_CUSTOMER, C_CURRENCY, C_TYPE, C_STATUS, C_AMOUNT,
       PR_NCOLS };
static const char *const pr_cols[PR_NCOLS] = {"event_id", "received_at", "occurred_at",
                                              "customer", "currency",    "type",
                                              "status",   "amount"};
static const char *const pr_currencies[] = {"CHF", "EUR", "GBP", "USD"};
static const char *const pr_unsettled[] = {"declined", "failed", "pending"};
static const char pr_settled[] = "settled";

/* The single mistakes, in the order trap_answer lists them. */
enum { M_DUP = 1, M_STATUS = 2, M_WINDOW = 4, M_SIGN = 8 };
static const struct {
    int bit;
    const char *name, *text;
} pr_mistakes[] = {
    {M_DUP, "duplicates",
     "Counting every delivery, so an event the processor redelivered is counted twice."},
    {M_STATUS, "status", "Dropping the status = 'settled' filter (pending, failed and declined "
                         "payments counted)."},
    {M_WINDOW, "window", "Comparing occurred_at with the bare end date as text "
                         "(occurred_at <= 'D2'), which drops the payments made during D2."},
    {M_SIGN, "refund_sign", "Summing `amount` as written, so a refund recorded as a positive "
                            "amount is added instead of subtracted."},
};
#define PR_NMISTAKES (sizeof pr_mistakes / sizeof pr_mistakes[0])

static const struct vat_param pr_params[] = {
    {.name = "rows_min", .type = VAT_PARAM_INT, .def = 24, .min = 12, .max = 2000,
     .doc = "fewest deliveries (data rows) in a fixture", .role = VAT_PARAM_ROWS},
    {.name = "rows_max", .type = VAT_PARAM_INT, .def = 90, .min = 12, .max = 2000,
     .doc = "most deliveries (data rows) in a fixture", .role = VAT_PARAM_ROWS},
    {.name = "customers_min", .type = VAT_PARAM_INT, .def = 3, .min = 2, .max = PR_MAX_CUSTOMERS,
     .doc = "fewest distinct customers"},
    {.name = "customers_max", .type = VAT_PARAM_INT, .def = 7, .min = 2, .max = PR_MAX_CUSTOMERS,
     .doc = "most distinct customers"},
    {.name = "by_currency_chance", .type = VAT_PARAM_REAL, .def = 0.35, .min = 0, .max = 1,
     .doc = "chance that the question groups by currency instead of by customer"},
    {.name = "sign_trap_chance", .type = VAT_PARAM_REAL, .def = 0.7, .min = 0, .max = 1,
     .doc = "chance that some refunds are recorded as positive amounts (arms refund_sign)"},
    {.name = "retry_rate", .type = VAT_PARAM_REAL, .def = 0.12, .min = 0, .max = 0.5,
     .doc = "share of events delivered twice (one is always planted)"},
    VAT_PROGFORM_PARAM,
    {0},
};

static const char *const pr_giveaways[] = {
    "exactly once", "counted once", "count once", "only once", "each `event_id`",
    "deduplicat", "de-duplicat", "duplicate", "retried", "retries", "whatever its time",
    "whatever the time", "inclusive", "in full", "time of day", "by its size",
    "absolute value", "whatever its sign", "regardless of", "tolerance", "is exactly",
    "are not counted", "ignore", NULL,
};
static const char *const pr_answer_columns[] = {"event_id", "occurred_at", "status", "type",
                                                "amount",   NULL};

/* ---- generation ---------------------------------------------------------- */

struct pr_event {
    int64_t at;        /* occurred_at, seconds since the epoch */
    int cust;
    bool refund;
    int status;        /* 0 settled, 1.. pr_unsettled[status - 1] */
    int64_t cents;     /* the size, > 0 */
    bool positive;     /* a refund written as a positive amount */
    int copies;        /* deliveries: 1 or 2 */
};

struct pr_row {
    int64_t received;
    size_t ev;
    size_t seq;
};

static int pr_row_cmp(const void *a, const void *b)
{
    const struct pr_row *x = a, *y = b;
    if (x->received != y->received)
        return x->received < y->received ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

static const struct vat_customer_mix pr_customers = {.company = 2, .person = 3};

static const char *const pr_months[] = {"January", "February", "March",     "April",
                                        "May",     "June",     "July",      "August",
                                        "September", "October", "November", "December"};

/* "3 March 2024", the way people write a day. */
static void pr_human_date(int32_t day, char out[32])
{
    char iso[11];
    vat_fmt_date(day, iso);
    int y = atoi(iso), m = atoi(iso + 5), d = atoi(iso + 8);
    snprintf(out, 32, "%d %s %d", d, pr_months[(m - 1) % 12], y);
}

/* Natural style: the question as a finance colleague asks it, the period
 * keyed on when the payment occurred and refunds netted off: conventions
 * in domain words, never the feed's defects. */
static const char *const pr_q_natural[] = {
    "We are reconciling the payment processor's feed. What did each {group_word} actually pay "
    "us, net of refunds, in settled payments made from {from_h} to {to_h}?",
    "Could you work out the net settled amount per {group_word} for the payments made between "
    "{from_h} and {to_h}?",
    "For the month-end close I need our net settled takings by {group_word} for payments made "
    "from {from_h} to {to_h}, refunds deducted.",
    "How much did we net from each {group_word} in settled payments made between {from_h} and "
    "{to_h}, after refunds?",
    "Finance asks: per {group_word}, what is the settled amount of the payments made from "
    "{from_h} to {to_h}, less refunds?",
    "[[For the audit|For the processor reconciliation|For our cash report]], what is the net "
    "of settled charges and refunds per {group_word} for payments made from {from_h} to "
    "{to_h}?",
};
static const char *const pr_c_natural[] = {
    "Payments count {day}, {both}, and {refund}.",
    "{^day}, {both}; {refund}.",
    "[[Date|Place]] each payment {day}, {both}; {refund}.",
    "Go {day}, {both}. {^refund}.",
};
static const char *const pr_d_natural[] = {
    "Attached is the log of webhook deliveries our endpoint received from the payment "
    "processor, one row per delivery. Columns: `event_id` (the processor's id of the payment "
    "event), `received_at` (when the delivery reached us), `occurred_at` (when the payment "
    "happened), `customer`, `currency` (each customer pays in one currency), `type` (`charge` "
    "or `refund`), `status` ({statuses}) and `amount` ({amount_fact}). Timestamps are "
    "YYYY-MM-DD HH:MM:SS in one time zone.",
    "The file is our webhook endpoint's delivery log from the payment processor: every row is "
    "one delivery, with `event_id` (the payment event it carries), `received_at` (delivery "
    "time) and `occurred_at` (payment time), both YYYY-MM-DD HH:MM:SS, then `customer`, "
    "`currency` (one per customer), `type` (`charge` or `refund`), `status` ({statuses}) and "
    "`amount` ({amount_fact}).",
    "This is what the processor's webhooks delivered to us, one row per delivery received: "
    "`event_id` identifies the payment event, `occurred_at` is when the payment took place and "
    "`received_at` when the delivery arrived (both YYYY-MM-DD HH:MM:SS, same time zone); "
    "`customer` pays in the `currency` shown; `type` is `charge` or `refund`; `status` is "
    "{statuses}; `amount` is {amount_fact}.",
    "Our payments endpoint logs every webhook delivery it receives, one row each. The columns "
    "are `event_id` (payment event id), `received_at` (when we received the delivery), "
    "`occurred_at` (when the payment happened; YYYY-MM-DD HH:MM:SS like `received_at`), "
    "`customer`, `currency` (a customer always pays in the same one), `type` (`charge` or "
    "`refund`), `status` ({statuses}) and `amount` ({amount_fact}).",
};
static const char *const pr_a_natural[] = {
    "Reply with a JSON object mapping each {group_word} (spelled as in `{group}`) to the net "
    "amount as a number, e.g. {\"<{group}>\": 1234.5}; leave out any {group_word} with no "
    "settled payment in that period.",
    "Please answer with one JSON object: keys are the `{group}` values as written in the file, "
    "values the net amounts as numbers. Only {group_word}s with settled payments in the "
    "period belong in it.",
    "Give the result as a JSON object [[like|for example|e.g.]] {\"<{group}>\": <net>, ...} in "
    "your answer, one key "
    "per {group_word} that has a settled payment in the period, named as in the file.",
    "Answer in JSON: an object whose keys are the {group_word}s (as the `{group}` column "
    "spells them) that had settled payments in those days, each with its net amount as a "
    "number.",
};
static const char *const pr_states_day[] = {
    "by the day the payment occurred", "by the day in `occurred_at`, when the payment "
    "happened", "by when the payment took place (`occurred_at`)", NULL,
};
static const char *const pr_states_both[] = {
    "both days included", "including both of those days", "counting both end dates", NULL,
};
static const char *const pr_states_refund[] = {
    "each refund reduces the total by the refunded amount",
    "a refund takes the refunded amount off the total",
    "refunds lower the total by the amount refunded", NULL,
};
static const char *const pr_states_settled[] = {"settled", NULL};
static const struct vat_convention pr_conventions[] = {
    {"timestamp", pr_states_day},
    {"inclusive", pr_states_both},
    {"mixed_refund_signs", pr_states_refund},
    {"status", pr_states_settled},
    {NULL, NULL},
};
/* The feed's defects, which a natural prompt never describes. */
static const char *const pr_defects[] = {
    "disagree", "positive or negative", "either sign", "redeliver", "delivered twice",
    "more than once", "twice", "same event again", NULL,
};

/* Explicit style: every rule spelled out, the traps included.  The
 * questions follow "Question: " (pr_say_question: both answer forms ask
 * them in these words). */
static const char *const pr_q_explicit[] = {
    "what is the net settled amount per `{group}` over the payments whose "
    "`occurred_at` falls from {from} through {to} inclusive? Count each `event_id` exactly once "
    "(a retried delivery repeats the event's row with a later `received_at`); keep only the "
    "events whose `status` is exactly `settled`; both days count in full, whatever the time of "
    "day; a `charge` adds its amount and a `refund` subtracts its size (the absolute value of "
    "`amount`, whatever its sign).",
    "per `{group}`, sum the settled payments made from {from} through {to} "
    "inclusive, net of refunds. Rules: an event delivered more than once (same `event_id`) is "
    "counted once; only `status` = `settled` counts; the window is on the day of "
    "`occurred_at`, both days in full, whatever its time of day; refunds are subtracted by "
    "their size, regardless of the sign written in `amount`.",
    "compute, for each `{group}`, charges minus refunds over the events with "
    "`status` exactly `settled` whose `occurred_at` day is between {from} and {to} inclusive "
    "(a timestamp late on {to} is inside). De-duplicate by `event_id` first: retries repeat "
    "the same event. A refund counts by its absolute value, whatever its sign.",
    "what net amount did each `{group}` settle from {from} through {to} inclusive? "
    "Take every distinct `event_id` once (ignore retried deliveries), keep `status` = "
    "`settled` only, include both days in full whatever the time of day of `occurred_at`, "
    "add charges and subtract refunds by their size (absolute value of `amount`).",
};
static const char *const pr_d_explicit[] = {
    "You are given a payment processor's webhook delivery log, one row per delivery, with the "
    "columns `event_id`, `received_at` (delivery time), `occurred_at` (payment time, "
    "YYYY-MM-DD HH:MM:SS), `customer`, `currency`, `type` (`charge` or `refund`), `status` "
    "({statuses}) and `amount` ({amount_fact}).",
    "The data is a webhook delivery log: `event_id`, `received_at`, `occurred_at` (both "
    "timestamps YYYY-MM-DD HH:MM:SS), `customer`, `currency`, `type` (`charge` or `refund`), "
    "`status` ({statuses}) and `amount` ({amount_fact}); one row per delivery.",
    "Each row of the file is one webhook delivery from a payment processor. Columns: "
    "`event_id`, `received_at` (when delivered), `occurred_at` (when paid; YYYY-MM-DD "
    "HH:MM:SS), `customer`, `currency`, `type` (`charge` | `refund`), `status` ({statuses}), "
    "`amount` ({amount_fact}).",
    "You have the deliveries a payments webhook received (one row each): `event_id`, "
    "`received_at`, `occurred_at` (YYYY-MM-DD HH:MM:SS), `customer`, `currency`, `type` "
    "(`charge` or `refund`), `status` ({statuses}), `amount` ({amount_fact}).",
};
static const char *const pr_a_explicit[] = {
    "Answer with one JSON value: an object whose keys are the `{group}` values spelled exactly "
    "as in the file and whose values are the net amounts as JSON numbers, for example "
    "{\"<{group}>\": <net>}. Include only the `{group}` values with at least one counted "
    "event. Key order does not matter.",
    "Answer with a JSON object {\"<{group}>\": <net>, ...}: one key per `{group}` that has a "
    "counted event, exactly as spelled in the file, each value a JSON number.",
    "Your answer is one JSON object mapping each `{group}` with a counted event (spelled as in "
    "the file) to its net amount as a JSON number; key order is free.",
    "Reply with exactly one JSON object: keys the `{group}` values (as in the file) that have "
    "at least one counted event, values their net amounts as JSON numbers.",
};

/* The event ids by rank: base + 7k for rising k, taking only those whose
 * text ("evt_" and the number) the task's side owns (vat_side_owns), so
 * the first cell of a delivery row is never one of the other side's.
 * Rank r gets the r-th; a new array of n. */
static long *pr_event_ids(int side, long base, size_t n)
{
    long *id = vat_xcalloc(n ? n : 1, sizeof *id);
    long k = 0;
    for (size_t i = 0; i < n; i++, k++) {
        char text[32];
        for (;; k++) {
            int len = snprintf(text, sizeof text, "evt_%ld", base + 7 * k);
            if (vat_side_owns(side, text, (size_t)len))
                break;
        }
        id[i] = base + 7 * k;
    }
    return id;
}

/* The question and what decides it, in the task's style, for both answer
 * forms.  Explicit: the question alone, lower case after "Question: ";
 * natural: the question and its conventions. */
static void pr_say_question(struct vat_buf *b, struct vat_task *t, const char *group,
                            const char *from, const char *to)
{
    if (vat_prompt_natural(t)) {
        int32_t d1 = 0, d2 = 0;
        char from_h[32] = "", to_h[32] = "";
        if (vat_parse_date(from, &d1) == 0 && vat_parse_date(to, &d2) == 0) {
            pr_human_date(d1, from_h);
            pr_human_date(d2, to_h);
        }
        const char *kv[] = {"group_word", group, "from_h", from_h, "to_h", to_h, NULL};
        VAT_PROMPT_PUT(b, t, 'q', pr_q_natural, kv);
        vat_buf_putc(b, ' ');
        /* one draw per statement: an initializer list's order is unspecified */
        const char *day = vat_prompt_state(t, "timestamp");
        const char *both = vat_prompt_state(t, "inclusive");
        const char *refund = vat_prompt_state(t, "mixed_refund_signs");
        const char *ckv[] = {"day", day, "both", both, "refund", refund, NULL};
        VAT_PROMPT_PUT(b, t, 'c', pr_c_natural, ckv);
        return;
    }
    const char *kv[] = {"group", group, "from", from, "to", to, NULL};
    VAT_PROMPT_PUT(b, t, 'q', pr_q_explicit, kv);
}

/* The events of a file of about nrows rows into ev (cap of them): the
 * planted ones first, each arming one mistake, then ordinary ones, then
 * every amount.  Returns how many; *rows gets the rows they make. */
static size_t pr_plant(struct vat_rng *r, struct pr_event *ev, size_t cap, int ncust,
                       int32_t first, int32_t span, int32_t d1, int32_t d2, long nrows,
                       bool sign_armed, double retry, size_t *rows_out)
{
    size_t n = 0;
    int g = (int)vat_rng_below(r, (uint32_t)ncust); /* where the plants go */
    int64_t in_day = (int64_t)vat_rng_range(r, d1, d2 - 1) * PR_DAY;
    /* One draw per statement (docs/determinism.md): each plant's fields
     * are drawn first, then the event is filled in. */
    struct pr_event x;
    /* duplicates: a settled charge delivered twice */
    x = (struct pr_event){.cust = g, .copies = 2};
    x.at = in_day + vat_rng_range(r, 8 * 3600, 18 * 3600);
    ev[n++] = x;
    /* status: an unsettled charge inside the window */
    x = (struct pr_event){.copies = 1};
    x.at = in_day + vat_rng_range(r, 0, PR_DAY - 1);
    x.cust = (int)vat_rng_below(r, (uint32_t)ncust);
    x.status = 1 + (int)vat_rng_below(r, 3);
    ev[n++] = x;
    /* window: a settled charge during D2 */
    x = (struct pr_event){.cust = g, .copies = 1};
    x.at = (int64_t)d2 * PR_DAY + vat_rng_range(r, 60, PR_DAY - 1);
    ev[n++] = x;
    /* the bounds: D1 at midnight in, a second either side out */
    x = (struct pr_event){.at = (int64_t)d1 * PR_DAY, .copies = 1};
    x.cust = (int)vat_rng_below(r, (uint32_t)ncust);
    ev[n++] = x;
    x = (struct pr_event){.at = (int64_t)d1 * PR_DAY - 1, .copies = 1};
    x.cust = (int)vat_rng_below(r, (uint32_t)ncust);
    ev[n++] = x;
    x = (struct pr_event){.at = (int64_t)(d2 + 1) * PR_DAY, .copies = 1};
    x.cust = (int)vat_rng_below(r, (uint32_t)ncust);
    ev[n++] = x;
    /* refunds: one written negative always; refund_sign: one positive */
    x = (struct pr_event){.refund = true, .copies = 1};
    x.at = in_day + vat_rng_range(r, 0, PR_DAY - 1);
    x.cust = (int)vat_rng_below(r, (uint32_t)ncust);
    ev[n++] = x;
    if (sign_armed) {
        x = (struct pr_event){.cust = g, .refund = true, .positive = true, .copies = 1};
        x.at = in_day + vat_rng_range(r, 0, PR_DAY - 1);
        ev[n++] = x;
    }
    size_t rows = n + 1; /* the planted duplicate */
    while (rows < (size_t)nrows && n < cap) {
        x = (struct pr_event){.copies = 1};
        int32_t day = first + (int32_t)vat_rng_range(r, 0, span - 1);
        x.at = (int64_t)day * PR_DAY + vat_rng_range(r, 0, PR_DAY - 1);
        x.cust = (int)vat_rng_below(r, (uint32_t)ncust);
        x.refund = vat_rng_chance(r, 0.15);
        x.positive = x.refund && sign_armed && vat_rng_chance(r, 0.5);
        x.status = vat_rng_chance(r, 0.75) ? 0 : 1 + (int)vat_rng_below(r, 3);
        if (rows + 2 <= (size_t)nrows && vat_rng_chance(r, retry))
            x.copies = 2;
        rows += (size_t)x.copies;
        ev[n++] = x;
    }
    for (size_t i = 0; i < n; i++) {
        int64_t hi = vat_rng_chance(r, 0.8) ? 40000 : 250000;
        ev[i].cents = vat_gen_cents(r, 500, hi);
        if (ev[i].refund && ev[i].cents > 20000)
            ev[i].cents /= 4; /* refunds are mostly partial */
    }
    *rows_out = rows;
    return n;
}

/* The file's rows into c: each event delivered once or twice, in the
 * order received, with ids in order of occurrence (those side owns).
 * Returns the rows. */
static size_t pr_deliveries(struct vat_rng *r, int side, const struct pr_event *ev, size_t n,
                            size_t rows, char cust[][64], const int *cur_of, struct vat_csv *csv)
{
    /* Deliveries in the order received: a first delivery seconds to
     * minutes after the payment, a redelivery minutes to hours later. */
    struct pr_row *dl = vat_xcalloc(rows + 1, sizeof *dl);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t at = ev[i].at + vat_rng_range(r, 1, 600);
        for (int c = 0; c < ev[i].copies; c++) {
            dl[m] = (struct pr_row){.received = at, .ev = i, .seq = m};
            m++;
            at += vat_rng_range(r, 300, 6 * 3600);
        }
    }
    qsort(dl, m, sizeof *dl, pr_row_cmp);
    /* event ids in order of occurrence, as the processor numbers them */
    size_t *order = vat_xcalloc(n, sizeof *order);
    long base = (long)vat_rng_range(r, 10000000, 90000000);
    long *event_id = pr_event_ids(side, base, n);
    for (size_t i = 0; i < n; i++) {
        size_t rank = 0;
        for (size_t j = 0; j < n; j++)
            rank += ev[j].at < ev[i].at || (ev[j].at == ev[i].at && j < i);
        order[i] = rank;
    }

    vat_csv_add_row(csv, pr_cols, PR_NCOLS);
    char money[32], stamp[20];
    for (size_t k = 0; k < m; k++) {
        const struct pr_event *pe = &ev[dl[k].ev];
        vat_csv_row_begin(csv);
        vat_csv_addf(csv, "evt_%ld", event_id[order[dl[k].ev]]);
        vat_csv_add(csv, vat_fmt_timestamp(dl[k].received, stamp));
        vat_csv_add(csv, vat_fmt_timestamp(pe->at, stamp));
        vat_csv_add(csv, cust[pe->cust]);
        vat_csv_add(csv, pr_currencies[cur_of[pe->cust]]);
        vat_csv_add(csv, pe->refund ? "refund" : "charge");
        vat_csv_add(csv, pe->status ? pr_unsettled[pe->status - 1] : pr_settled);
        int64_t v = pe->refund && !pe->positive ? -pe->cents : pe->cents;
        vat_csv_add(csv, vat_fmt_cents(v, money, sizeof money));
    }
    free(order);
    free(event_id);
    free(dl);
    return m;
}

static int pr_generate(struct vat_task *t, struct vat_rng *r, struct vat_err *e)
{
    long rmin = vat_task_int(t, "rows_min"), rmax = vat_task_int(t, "rows_max");
    long cmin = vat_task_int(t, "customers_min"), cmax = vat_task_int(t, "customers_max");
    double by_cur = vat_task_real(t, "by_currency_chance");
    double sign_chance = vat_task_real(t, "sign_trap_chance");
    double retry = vat_task_real(t, "retry_rate");

    bool by_currency = vat_rng_chance(r, by_cur);
    bool sign_armed = vat_rng_chance(r, sign_chance);
    int ncust = (int)vat_rng_range(r, cmin, cmax);
    char cust[PR_MAX_CUSTOMERS][64];
    if (vat_gen_unique(r, vat_gen_customer, &pr_customers, &cust[0][0], (size_t)ncust,
                       sizeof cust[0]) != (size_t)ncust)
        return vat_err_set(e, "%s: cannot draw %d distinct customers", t->id, ncust);
    int cur_of[PR_MAX_CUSTOMERS];
    /* Grouped by currency, at least two currencies appear. */
    for (int i = 0; i < ncust; i++)
        cur_of[i] = i < 2 ? i : (int)vat_rng_below(r, 4);
    int cur_shift = (int)vat_rng_below(r, 4);
    for (int i = 0; i < ncust; i++)
        cur_of[i] = (cur_of[i] + cur_shift) % 4;

    long nrows = vat_rng_range(r, rmin, rmax);
    if (t->inline_full) {
        /* Self-contained mode: the whole file must fit the prompt. */
        long fit = ((long)t->inline_max_bytes - 120) / PR_ROW_BYTES;
        if (fit < 12)
            fit = 12;
        if (nrows > fit)
            nrows = fit;
    }

    int32_t width = (int32_t)vat_rng_range(r, 3, 12);
    int32_t first = vat_date_from_civil(2023, 1, 1) + (int32_t)vat_rng_range(r, 0, 700);
    int32_t span = width + (int32_t)vat_rng_range(r, 8, 30);
    int32_t d1 = first + (int32_t)vat_rng_range(r, 2, span - width - 2);
    int32_t d2 = d1 + width - 1;

    /* The events: planted ones first, each arming one mistake. */
    size_t cap = (size_t)nrows + 8;
    struct pr_event *ev = vat_xcalloc(cap, sizeof *ev);
    size_t rows = 0;
    size_t n = pr_plant(r, ev, cap, ncust, first, span, d1, d2, nrows, sign_armed, retry, &rows);

    struct vat_csv c = VAT_CSV_INIT;
    pr_deliveries(r, t->side, ev, n, rows, cust, cur_of, &c);
    free(ev);
    if (vat_an_write_csv(t, &c, ".csv", "main", e) < 0) {
        vat_csv_release(&c);
        return -1;
    }

    /* The prompt: data description, question, answer format, data. */
    char from[11], to[11];
    vat_fmt_date(d1, from);
    vat_fmt_date(d2, to);
    const char *group = by_currency ? "currency" : "customer";
    bool nat = vat_prompt_natural(t);
    const char *kv[] = {
        "group", group,
        "group_word", group,
        "topic", "[[the payment processor's feed|this week's settlements|our refunds and "
                 "charges]]",
        "statuses", "`declined`, `failed`, `pending` or `settled`",
        "amount_fact",
        nat ? (sign_armed ? "a decimal with two places"
                          : "a decimal with two places; refunds are written as negative amounts")
            : (sign_armed ? "a decimal with two places; the channels that record refunds "
                            "disagree on the sign, so a refund's amount may be written positive "
                            "or negative"
                          : "a decimal with two places; refunds are written as negative amounts"),
        NULL,
    };
    struct vat_buf b = VAT_BUF_INIT;
    vat_prompt_open(&b, t, kv);
    if (nat) {
        VAT_PROMPT_PUT(&b, t, 'd', pr_d_natural, kv);
        vat_buf_puts(&b, "\n\n");
        pr_say_question(&b, t, group, from, to);
        vat_buf_puts(&b, "\n\n");
        VAT_PROMPT_PUT(&b, t, 'a', pr_a_natural, kv);
        vat_buf_puts(&b, "\n\n");
    } else {
        VAT_PROMPT_PUT(&b, t, 'd', pr_d_explicit, kv);
        vat_buf_puts(&b, "\n\nQuestion: ");
        pr_say_question(&b, t, group, from, to);
        vat_buf_puts(&b, "\n\n");
        VAT_PROMPT_PUT(&b, t, 'a', pr_a_explicit, kv);
        vat_buf_putc(&b, ' ');
        vat_prompt_tolerance(&b, t, PR_REL_TOL, PR_ABS_TOL);
        vat_buf_puts(&b, "\n\n");
    }
    vat_an_prompt_csv(&b, t, 0, &c);
    t->prompt = vat_buf_detach(&b);
    vat_csv_release(&c);

    t->params = json_pack("{s:s, s:s, s:s, s:b, s:s, s:s, s:b}", "group_by", group, "from", from,
                          "to", to, "inclusive", 1, "status", pr_settled, "timestamp",
                          "occurred_at", "mixed_refund_signs", sign_armed);


    struct vat_an_spec s = {.shape = "object", .rel_tol = PR_REL_TOL, .abs_tol = PR_ABS_TOL};
    t->spec = vat_an_value_spec(&s);
    return 0;
}

/* ---- gold, confirm, traps -------------------------------------------------- */

static int pr_window(const struct vat_task *t, const char **from, const char **to, int32_t *d1,
                     int32_t *d2, const char **group, struct vat_err *e)
{
    *from = json_string_value(json_object_get(t->params, "from"));
    *to = json_string_value(json_object_get(t->params, "to"));
    *group = json_string_value(json_object_get(t->params, "group_by"));
    if (!*from || !*to || vat_parse_date(*from, d1) != 0 || vat_parse_date(*to, d2) != 0 ||
        *d2 < *d1)
        return vat_err_set(e, "%s: params lack valid 'from' and 'to' dates", t->id);
    if (!*group || (strcmp(*group, "customer") != 0 && strcmp(*group, "currency") != 0))
        return vat_err_set(e, "%s: params lack a valid 'group_by'", t->id);
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The net per group over the fixture as written, with the mistakes in
 * `mistakes` (M_* bits) made: 0 is gold. */
static json_t *pr_net_file(const struct vat_task *t, int mistakes, struct vat_err *e)
{
    const char *from, *to, *group;
    int32_t d1, d2;
    if (pr_window(t, &from, &to, &d1, &d2, &group, e) != 0)
        return NULL;
    size_t gcol = strcmp(group, "customer") == 0 ? C_CUSTOMER : C_CURRENCY;
    struct vat_csv c = VAT_CSV_INIT;
    if (vat_an_read_csv(t, 0, pr_cols, PR_NCOLS, &c, e) != 0)
        return NULL;
    /* event ids seen, sorted for bsearch as they come (n is small) */
    const char **seen = vat_xcalloc(c.nrows + 1, sizeof *seen);
    size_t nseen = 0;
    struct vat_an_tally net = VAT_AN_TALLY_INIT;
    json_t *out = NULL;
    for (size_t i = 1; i < c.nrows; i++) {
        const char *id = vat_csv_get(&c, i, C_EVENT), *at = vat_csv_get(&c, i, C_OCCURRED);
        const char *type = vat_csv_get(&c, i, C_TYPE);
        int64_t cents, secs;
        if (vat_an_csv_cents(t, 0, &c, i, C_AMOUNT, &cents, e) != 0)
            goto done;
        if (vat_parse_timestamp(at, &secs) != 0) {
            vat_err_set(e, "%s: '%s' record %zu: occurred_at '%s' is not YYYY-MM-DD HH:MM:SS",
                        t->id, t->fixture[0].path, i + 1, at);
            goto done;
        }
        bool refund = strcmp(type, "refund") == 0;
        if (!refund && strcmp(type, "charge") != 0) {
            vat_err_set(e, "%s: '%s' record %zu: type '%s' is neither charge nor refund", t->id,
                        t->fixture[0].path, i + 1, type);
            goto done;
        }
        if (!(mistakes & M_DUP)) {
            if (bsearch(&id, seen, nseen, sizeof *seen, cmp_str))
                continue;
            size_t k = nseen;
            while (k > 0 && strcmp(seen[k - 1], id) > 0) {
                seen[k] = seen[k - 1];
                k--;
            }
            seen[k] = id;
            nseen++;
        }
        if (!(mistakes & M_STATUS) && strcmp(vat_csv_get(&c, i, C_STATUS), pr_settled) != 0)
            continue;
        int64_t day = secs / PR_DAY - (secs % PR_DAY < 0);
        bool in = (mistakes & M_WINDOW) ? strcmp(at, from) >= 0 && strcmp(at, to) <= 0
                                        : day >= d1 && day <= d2;
        if (!in)
            continue;
        int64_t v = cents;
        if (refund && !(mistakes & M_SIGN))
            v = cents < 0 ? cents : -cents;
        vat_an_tally_add(&net, vat_csv_get(&c, i, gcol), v);
    }
    out = vat_an_tally_cents_json(&net);
done:
    vat_an_tally_release(&net);
    free(seen);
    vat_csv_release(&c);
    return out;
}

static int pr_reference(struct vat_task *t, struct vat_err *e)
{
    return vat_an_gold_from(t, pr_net_file(t, 0, e), "no settled payment falls in the window",
                            e);
}

/* SQL over the CSV loaded into SQLite: DISTINCT rows (a redelivery repeats
 * the event's payload; received_at left out), date() BETWEEN the days,
 * refunds by -abs(), integer cents, so the totals must equal gold bit for
 * bit. */
static int pr_confirm(const struct vat_task *t, struct vat_err *e)
{
    static const char *const types[PR_NCOLS] = {"TEXT", "TEXT", "TEXT", "TEXT",
                                                "TEXT", "TEXT", "TEXT", "REAL"};
    const char *from, *to, *group;
    int32_t d1, d2;
    if (pr_window(t, &from, &to, &d1, &d2, &group, e) != 0)
        return -1;
    char sql[1024];
    /* from/to passed vat_parse_date and group is one of two names */
    snprintf(sql, sizeof sql,
             "SELECT %s, SUM(CASE WHEN type = 'refund' THEN -abs(c) ELSE c END) / 100.0 FROM "
             "(SELECT DISTINCT event_id, occurred_at, customer, currency, type, status, "
             "CAST(round(amount * 100) AS INTEGER) AS c FROM payments) "
             "WHERE status = 'settled' AND date(occurred_at) BETWEEN '%s' AND '%s' "
             "GROUP BY %s ORDER BY %s",
             group, from, to, group, group);
    struct vat_an_query q = {.table = "payments", .types = types, .sql = sql,
                             .kind = VAT_AN_OBJECT};
    return vat_an_confirm_query(t, &q, 0, 0, e);
}

static int pr_trap(struct vat_task *t, struct vat_err *e)
{
    bool sign = json_is_true(json_object_get(t->params, "mixed_refund_signs"));
    int all = 0;
    /* trap_answer may run again on a recrafted fixture (tests/test_analytics.c) */
    for (int i = 0; i < t->n_traps; i++) {
        free(t->traps[i].answer);
        t->traps[i].answer = NULL;
    }
    t->n_traps = 0;
    for (size_t i = 0; i < PR_NMISTAKES; i++) {
        if (pr_mistakes[i].bit == M_SIGN && !sign)
            continue;
        json_t *v = pr_net_file(t, pr_mistakes[i].bit, e);
        if (!v)
            return -1;
        struct vat_trap *tp = &t->traps[t->n_traps++];
        tp->name = pr_mistakes[i].name;
        tp->text = pr_mistakes[i].text;
        tp->answer = vat_json_dumps(v);
        json_decref(v);
        all |= pr_mistakes[i].bit;
    }
    return vat_an_trap_from(t, pr_net_file(t, all, e));
}

/* ---- the program form ------------------------------------------------------ */

static const char *const pr_types[PR_NCOLS] = {"TEXT", "TEXT", "TEXT", "TEXT",
                                               "TEXT", "TEXT", "TEXT", "REAL"};
static const char *const pr_tables[] = {"payments", "webhook_deliveries", "payment_events",
                                        "processor_feed", "deliveries"};
static const char *const pr_outs[] = {"net", "net_amount", "net_settled", "settled_net",
                                      "total"};

/* The task's grouping and window as generate() recorded them ("" when
 * absent: then the queries fail admission, never crash). */
struct pr_ask {
    const char *from, *to, *group;
    bool sign;
};

static struct pr_ask pr_ask_of(const struct vat_task *t)
{
    struct pr_ask a = {"", "", "customer", false};
    const char *from, *to, *group;
    int32_t d1, d2;
    if (pr_window(t, &from, &to, &d1, &d2, &group, NULL) == 0) {
        a.from = from;
        a.to = to;
        a.group = group;
    }
    a.sign = json_is_true(json_object_get(t->params, "mixed_refund_signs"));
    return a;
}

static char *pr_pf_question(struct vat_task *t)
{
    struct pr_ask a = pr_ask_of(t);
    struct vat_buf b = VAT_BUF_INIT;
    pr_say_question(&b, t, a.group, a.from, a.to);
    return vat_buf_detach(&b);
}

static char *pr_pf_shape(struct vat_task *t, const struct vat_pf_names *n)
{
    const char *g = pr_ask_of(t).group;
    const char *kv[] = {"g", g, "out", n->out, "dir", n->descending ? "descending" : "ascending",
                        NULL};
    if (vat_prompt_natural(t))
        return vat_prompt_text(
            t, 's',
            "[[Return|It should return|I'd like]] two columns, `{g}` (as stored) and `{out}` "
            "(the net amount), one row per {g} with a settled payment in the period, "
            "[[ordered|sorted]] by `{g}` {dir}.",
            kv);
    return vat_prompt_text(
        t, 's',
        "[[It must return|The result must have|Return]] exactly two columns, `{g}` (as stored) "
        "and `{out}` (the net amount, a number), one row per `{g}` that has at least one "
        "counted event and no other rows, [[ordered|sorted]] by `{g}` {dir} (SQLite's default "
        "text order).",
        kv);
}

/* The query with the mistakes in `mistakes` (M_* bits) made: 0 is gold.
 * Gold takes each event once (DISTINCT over the payload: a redelivery
 * differs only in received_at), settled only, the window on the day of
 * occurred_at, refunds by -ABS (a simple CASE: no comparison to flip). */
static char *pr_pf_query(const struct vat_task *t, const struct vat_pf_names *n, int mistakes)
{
    struct pr_ask a = pr_ask_of(t);
    struct vat_buf b = VAT_BUF_INIT;
    vat_buf_printf(&b, "SELECT %s, SUM(%s) AS %s\nFROM ", a.group,
                   (mistakes & M_SIGN) ? "amount"
                                       : "CASE type WHEN 'refund' THEN -ABS(amount) ELSE amount END",
                   n->out);
    if (mistakes & M_DUP)
        vat_buf_puts(&b, n->table);
    else
        vat_buf_printf(&b,
                       "(SELECT DISTINCT event_id, occurred_at, customer, currency, type, "
                       "status, amount\n      FROM %s)",
                       n->table);
    vat_buf_puts(&b, "\nWHERE ");
    if (!(mistakes & M_STATUS))
        vat_buf_printf(&b, "status = '%s' AND ", pr_settled);
    vat_buf_puts(&b, (mistakes & M_WINDOW) ? "occurred_at" : "date(occurred_at)");
    vat_buf_puts(&b, " BETWEEN ");
    vat_sqlgen_put_literal(&b, a.from);
    vat_buf_puts(&b, " AND ");
    vat_sqlgen_put_literal(&b, a.to);
    vat_buf_printf(&b, "\nGROUP BY %s\nORDER BY %s%s", a.group, a.group,
                   n->descending ? " DESC" : "");
    return vat_buf_detach(&b);
}

static char *pr_pf_gold(const struct vat_task *t, const struct vat_pf_names *n)
{
    return pr_pf_query(t, n, 0);
}

/* Every armed mistake at once, as t->trap is. */
static char *pr_pf_trap(const struct vat_task *t, const struct vat_pf_names *n)
{
    return pr_pf_query(t, n, M_DUP | M_STATUS | M_WINDOW | (pr_ask_of(t).sign ? M_SIGN : 0));
}

/* One named mistake alone (a name of pr_mistakes), as t->traps[] lists. */
static char *pr_pf_single(const struct vat_task *t, const struct vat_pf_names *n,
                          const char *name)
{
    for (size_t i = 0; i < PR_NMISTAKES; i++)
        if (strcmp(pr_mistakes[i].name, name) == 0)
            return pr_pf_query(t, n, pr_mistakes[i].bit);
    return NULL;
}

/* The statuses a variant writes: the processor's four, "voided" (not
 * settled, and sorting after `settled`, so status >= 'settled' is not
 * status = 'settled') and a blank cell (NULL: not settled either). */
static const char *const pr_v_status[] = {"settled", "declined", "failed", "pending",
                                          "voided",  ""};
enum { PR_VOIDED = 4, PR_BLANK = 5, PR_VCUST = 5, PR_EMPTY = 3, PR_VEVENTS = 32 };

/* Variant k: five new customers, the first four in four currencies and
 * the fifth sharing the first one's, over the task's window.  Customer 0
 * has a settled charge delivered twice (duplicates) and, when the task's
 * refunds have mixed signs, a refund written positive (refund_sign);
 * customer 1 a settled charge during D2 (window; variant 2: at its last
 * second) and one a second before D1 (out); customer 2 a charge at D1
 * midnight (in) and a refund written negative (variant 3: -0.01);
 * customer 3 (per currency: its currency) has no qualifying row: an
 * unsettled charge inside the window (status; declined, failed, pending
 * by variant) and a settled one at midnight after D2 (out); customer 4 a
 * voided charge inside the window; variant 2 a charge with a blank status.
 * The rest at random over customers 0, 1, 2 and 4, some delivered twice;
 * received_at is blank on some deliveries (not logged). */
static int pr_pf_variant(const struct vat_task *t, struct vat_rng *r, int k, struct vat_csv *c,
                         struct vat_err *e)
{
    const char *from, *to, *group;
    int32_t d1, d2;
    if (pr_window(t, &from, &to, &d1, &d2, &group, e) != 0)
        return -1;
    bool sign = json_is_true(json_object_get(t->params, "mixed_refund_signs"));
    char cust[PR_VCUST][64];
    if (vat_gen_unique(r, vat_gen_customer, &pr_customers, &cust[0][0], PR_VCUST,
                       sizeof cust[0]) != PR_VCUST)
        return vat_err_set(e, "%s: variant %d: cannot draw %d distinct customers", t->id, k,
                           PR_VCUST);
    int shift = (int)vat_rng_below(r, 4);
    int cur_of[PR_VCUST];
    for (int i = 0; i < PR_VCUST; i++)
        cur_of[i] = ((i < 4 ? i : 0) + shift) % 4;
    int32_t first = d1 - (int32_t)vat_rng_range(r, 2, 6);
    int32_t last = d2 + (int32_t)vat_rng_range(r, 2, 6);
    int64_t in_day = (int64_t)vat_rng_range(r, d1, d2 > d1 ? d2 - 1 : d1) * PR_DAY;

    struct pr_event ev[PR_VEVENTS];
    size_t n = 0;
    struct pr_event x;
    x = (struct pr_event){.cust = 0, .copies = 2};
    x.at = in_day + vat_rng_range(r, 8 * 3600, 18 * 3600);
    ev[n++] = x;
    x = (struct pr_event){.cust = PR_EMPTY, .copies = 1, .status = 1 + (k - 1) % 3};
    x.at = in_day + vat_rng_range(r, 0, PR_DAY - 1);
    ev[n++] = x;
    x = (struct pr_event){.cust = 1, .copies = 1};
    x.at = (int64_t)d2 * PR_DAY + (k == 2 ? PR_DAY - 1 : vat_rng_range(r, 60, PR_DAY - 2));
    ev[n++] = x;
    ev[n++] = (struct pr_event){.cust = 1, .at = (int64_t)d1 * PR_DAY - 1, .copies = 1};
    ev[n++] = (struct pr_event){.cust = 2, .at = (int64_t)d1 * PR_DAY, .copies = 1};
    ev[n++] = (struct pr_event){.cust = PR_EMPTY, .at = (int64_t)(d2 + 1) * PR_DAY, .copies = 1};
    size_t negative = n;
    x = (struct pr_event){.cust = 2, .refund = true, .copies = 1};
    x.at = in_day + vat_rng_range(r, 0, PR_DAY - 1);
    ev[n++] = x;
    if (sign) {
        x = (struct pr_event){.cust = 0, .refund = true, .positive = true, .copies = 1};
        x.at = in_day + vat_rng_range(r, 0, PR_DAY - 1);
        ev[n++] = x;
    }
    x = (struct pr_event){.cust = 4, .status = PR_VOIDED, .copies = 1};
    x.at = in_day + vat_rng_range(r, 0, PR_DAY - 1);
    ev[n++] = x;
    if (k == 2) {
        x = (struct pr_event){.cust = 2, .status = PR_BLANK, .copies = 1};
        x.at = in_day + vat_rng_range(r, 0, PR_DAY - 1);
        ev[n++] = x;
    }
    size_t more = (size_t)vat_rng_range(r, 10, 18);
    for (size_t i = 0; i < more && n < PR_VEVENTS; i++) {
        x = (struct pr_event){.copies = 1};
        int32_t day = first + (int32_t)vat_rng_range(r, 0, last - first);
        x.at = (int64_t)day * PR_DAY + vat_rng_range(r, 0, PR_DAY - 1);
        int who = (int)vat_rng_below(r, 4);
        x.cust = who == PR_EMPTY ? 4 : who;
        x.refund = vat_rng_chance(r, 0.15);
        x.positive = x.refund && sign && vat_rng_chance(r, 0.5);
        x.status = vat_rng_chance(r, 0.75) ? 0 : 1 + (int)vat_rng_below(r, 3);
        x.copies = vat_rng_chance(r, 0.12) ? 2 : 1;
        ev[n++] = x;
    }
    for (size_t i = 0; i < n; i++) {
        int64_t hi = vat_rng_chance(r, 0.8) ? 40000 : 250000;
        ev[i].cents = vat_gen_cents(r, 500, hi);
        if (ev[i].refund && ev[i].cents > 20000)
            ev[i].cents /= 4;
    }
    if (k == 3)
        ev[negative].cents = 1; /* the refund written negative: -0.01 */

    struct pr_row dl[2 * PR_VEVENTS];
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t at = ev[i].at + vat_rng_range(r, 1, 600);
        for (int cp = 0; cp < ev[i].copies; cp++) {
            dl[m] = (struct pr_row){.received = at, .ev = i, .seq = m};
            m++;
            at += vat_rng_range(r, 300, 6 * 3600);
        }
    }
    qsort(dl, m, sizeof *dl, pr_row_cmp);
    long base = (long)vat_rng_range(r, 10000000, 90000000);
    long *event_id = pr_event_ids(t->side, base, n);
    vat_csv_add_row(c, pr_cols, PR_NCOLS);
    char money[32], stamp[20];
    for (size_t j = 0; j < m; j++) {
        const struct pr_event *pe = &ev[dl[j].ev];
        size_t rank = 0;
        for (size_t i = 0; i < n; i++)
            rank += ev[i].at < pe->at || (ev[i].at == pe->at && i < dl[j].ev);
        bool blank = vat_rng_chance(r, 0.15);
        vat_csv_row_begin(c);
        vat_csv_addf(c, "evt_%ld", event_id[rank]);
        vat_csv_add(c, blank ? "" : vat_fmt_timestamp(dl[j].received, stamp));
        vat_csv_add(c, vat_fmt_timestamp(pe->at, stamp));
        vat_csv_add(c, cust[pe->cust]);
        vat_csv_add(c, pr_currencies[cur_of[pe->cust]]);
        vat_csv_add(c, pe->refund ? "refund" : "charge");
        vat_csv_add(c, pr_v_status[pe->status]);
        int64_t v = pe->refund && !pe->positive ? -pe->cents : pe->cents;
        vat_csv_add(c, vat_fmt_cents(v, money, sizeof money));
    }
    free(event_id);
    return 0;
}

static const struct vat_progform pr_progform = {
    .tables = pr_tables,
    .ntables = sizeof pr_tables / sizeof *pr_tables,
    .outs = pr_outs,
    .nouts = sizeof pr_outs / sizeof *pr_outs,
    .columns = pr_cols,
    .types = pr_types,
    .ncols = PR_NCOLS,
    .ordered = true,
    .kind = VAT_AN_OBJECT,
    .rel_tol = PR_REL_TOL,
    .abs_tol = PR_ABS_TOL,
    .nvariants = 3,
    .question = pr_pf_question,
    .shape = pr_pf_shape,
    .gold_sql = pr_pf_gold,
    .trap_sql = pr_pf_trap,
    .variant = pr_pf_variant,
    .traps_sql = pr_pf_single,
};

const struct vat_template vat_tmpl_payments_reconciliation = {
    .version = VAT_TEMPLATE_V1,
    .name = "payments_reconciliation",
    .family = "analytics",
    .answer_kind = "value",
    .trap = "Summing the delivery log as it stands: redelivered events counted twice, unsettled "
            "payments counted, D2 compared as a bare date, refunds taken with the sign written.",
    .summary = "Net settled amount per customer or currency over the payments made from D1 "
               "through D2, each event once, refunds by their size.",
    .params = pr_params,
    .default_count = 12,
    .generate = pr_generate,
    .reference = pr_reference,
    .confirm = pr_confirm,
    .trap_answer = pr_trap,
    .check = vat_check_task,
    .giveaways = pr_giveaways,
    .answer_columns = pr_answer_columns,
    .progform = &pr_progform,
    .conventions = pr_conventions,
    .defects = pr_defects,
};
