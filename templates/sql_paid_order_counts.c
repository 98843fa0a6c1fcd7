/* sql_paid_order_counts.c — a compound SQL template: an SQLite
 * database with a customers table and an orders table (with a status and
 * a placed-at timestamp), and the question "every customer with their
 * number of paid orders placed from D1 through D2, zero included",
 * answered with one SQL SELECT.  Gold needs three things at once: a LEFT
 * JOIN that keeps customers without such orders (their conditions in the
 * ON clause, COUNT over the order's key), the status filter, and an
 * inclusive window of whole days over timestamps.  Each of four single
 * mistakes is a trap armed on the main fixture of every admitted task and
 * proven on its own at admission:
 *   where_filter  the status and window conditions in WHERE, which drops
 *                 every customer without a paid order in the window;
 *   count_star    COUNT(*) over the LEFT JOIN (1 for such a customer);
 *   status        no status filter (pending, cancelled, refunded counted);
 *   window        the timestamps compared with the bare dates as text
 *                 (placed_at <= 'D2' drops the orders placed during D2).
 * The question's names, key type, output columns and order are drawn per
 * task (the family's machinery, shared with sql_order_counts, is in
 * ordercounts.h), the names and the window's first day from the
 * template's question space
 * (docs/scale.md), so no two tasks share their gold query; held-
 * out variants add corner cases: customers with only unpaid orders, only
 * orders outside the window, orders a second either side of each bound,
 * guest checkouts and unknown customers, ties.
 * Exports vat_tmpl_sql_paid_order_counts. */
#include <stdio.h>
#include <stdlib.h>

#include "ordercounts.h"
#include "prompt.h"
#include "template.h"
#include "values.h"

/* The first seven orders tables and five count names of the family; a
 * status column, and only 'paid' counts. */
static const struct vat_oc_kind kind = {.n_orders_tables = 7, .n_count_names = 5, .paid = true};

/* The single mistakes, each a trap of its own. */
static const struct {
    int bit;
    const char *name, *text;
} mistakes[] = {
    {VAT_OC_M_WHERE, "where_filter",
     "Putting the status and date conditions in WHERE, which turns the LEFT JOIN into an inner "
     "join and drops the customers without a paid order in the window."},
    {VAT_OC_M_STAR, "count_star",
     "COUNT(*) over the LEFT JOIN, which counts 1 for a customer without a paid order in the "
     "window."},
    {VAT_OC_M_STATUS, "status",
     "Dropping the status = 'paid' condition, so pending, cancelled and refunded orders are "
     "counted."},
    {VAT_OC_M_WINDOW, "window",
     "Comparing the timestamps with the bare dates as text (placed_at <= 'D2'), which drops "
     "the orders placed during D2."},
};
#define N_MISTAKES (sizeof mistakes / sizeof mistakes[0])

/* ---- the question space ----------------------------------------------------- */

/* The question space: the parts the gold query spells whatever the drawn
 * features, as the digits of one mixed-radix number: customer table and
 * key, orders table and id, the timestamp column, the status column, the
 * count alias, and the window's first day: y0-01-01 + 120 + k, y0 (the
 * first of the orders' three years) one of 2018-2023 and k one of 365, so
 * the days of two y0 never meet.  Every list's entries
 * are distinct and the gold spells each part, so two numbers name two
 * different gold queries.  9 x 7 x 3 x 3 x 5 x 6 x 365 = 6,207,300
 * questions. */
#define Y0_FIRST 2018
#define N_Y0 6
#define N_FIRST_DAYS 365
#define N_QUESTIONS                                                                           \
    ((uint64_t)VAT_N_OF(vat_oc_customer_tables) * kind.n_orders_tables *                      \
     VAT_N_OF(vat_oc_stamp_cols) * VAT_N_OF(vat_oc_status_cols) * kind.n_count_names * N_Y0 * \
     N_FIRST_DAYS)

/* Replaces the drawn parts with the ones question number k decodes to.
 * The draws they replace stay in the stream, so every later draw of the
 * task (the fixture rows) comes from the same place in it; the window
 * keeps its drawn length. */
static void apply_question(struct vat_oc_question *q, uint64_t k)
{
    /* one digit per statement: the order they are read in is the number's */
    const struct vat_oc_customer_choice *cc =
        &vat_oc_customer_tables[vat_question_digit(&k, VAT_N_OF(vat_oc_customer_tables))];
    q->ctable = cc->table;
    q->key = cc->key;
    q->fk = cc->fk;
    q->code_prefix = cc->code_prefix;
    const struct vat_oc_orders_choice *oc =
        &vat_oc_orders_tables[vat_question_digit(&k, kind.n_orders_tables)];
    q->otable = oc->table;
    q->oid = oc->id;
    q->date_col = vat_oc_stamp_cols[vat_question_digit(&k, VAT_N_OF(vat_oc_stamp_cols))];
    q->status_col = vat_oc_status_cols[vat_question_digit(&k, VAT_N_OF(vat_oc_status_cols))];
    q->count_name = vat_oc_count_names[vat_question_digit(&k, kind.n_count_names)];
    int y0 = Y0_FIRST + (int)vat_question_digit(&k, N_Y0);
    int32_t len = q->hi - q->lo;
    q->span_lo = vat_date_from_civil(y0, 1, 1);
    q->span_hi = vat_date_from_civil(y0 + 2, 12, 31);
    q->lo = q->span_lo + 120 + (int32_t)k;
    q->hi = q->lo + len;
}

/* ---- the question as text ---------------------------------------------------- */

/* Natural style: an account manager's request, in shop words; the paid
 * state, the window's bounds and the day an order counts on as
 * conventions. */
static const char *const q_natural[] = {
    "Sales ops would like a list of {every} in `{ctable}` with how many paid orders they "
    "placed from {from_h} to {to_h}.",
    "For the loyalty review: how many paid orders did {every} (all of `{ctable}`) place "
    "between {from_h} and {to_h}?",
    "Can you pull, for {every} on file in `{ctable}`, the number of paid orders they placed "
    "between {from_h} and {to_h}?",
    "We need the count of paid orders from {from_h} to {to_h} for {every} in `{ctable}`, "
    "please.",
    "[[For the account review|For our CRM clean-up|For the rewards mailing]], how many paid "
    "orders did {every} in `{ctable}` place from {from_h} to {to_h}?",
};
static const char *const c_natural[] = {
    "Orders count {by}, {both}.",
    "{^by}, {both}.",
    "[[Go|Count]] {by} ({both}).",
};
static const char *const d_natural[] = {
    "`{otable}.{status}` says where the order stands, `{otable}.{date}` is when it was placed "
    "(local time), and `{otable}.{fk}` is the customer who placed it (NULL for a guest "
    "checkout). `{ctable}.{key}` is {keykind}; customer names are not unique.",
    "Orders live in `{otable}`: `{fk}` points at `{ctable}.{key}` ({keykind}; empty for guest "
    "checkouts), `{date}` is the placement time and `{status}` the order's state. Names in "
    "`{ctable}` can repeat.",
    "Each row of `{otable}` is one order: who placed it (`{fk}`, referring to "
    "`{ctable}.{key}`, which is {keykind}; NULL for guests), when (`{date}`) and its state "
    "(`{status}`). Two customers may share a name.",
    "In `{otable}`, `{status}` is the order's state, `{date}` the time it was placed and "
    "`{fk}` the customer (a `{ctable}.{key}`, {keykind}, or NULL for a guest checkout). A "
    "customer's name does not identify them.",
};

/* Explicit style: every rule spelled out, the traps included. */
static const char *const q_explicit[] = {
    "Task: write one SQLite SELECT statement that lists every customer in `{ctable}` with "
    "the number of orders they placed from {from} through {to} (both days included) whose "
    "`{status}` is exactly 'paid'. A customer with no such order is listed with 0. An order "
    "belongs to the calendar day of its timestamp.",
    "Task: one SQLite SELECT listing every row of `{ctable}` with its count of 'paid' orders "
    "(`{status}` = 'paid') placed between {from} and {to} inclusive, by calendar day of "
    "`{date}`; customers without such an order appear with 0 (keep them with a LEFT JOIN "
    "whose conditions are in the ON clause).",
    "Task: count, for every customer in `{ctable}` (zero included), the orders with "
    "`{status}` = 'paid' whose `{date}` falls on a day from {from} through {to} inclusive, "
    "whatever the time of day. Write it as one SQLite SELECT.",
    "Task: write a single SQLite SELECT: every customer of `{ctable}`, and how many of their "
    "orders are paid (`{status}` exactly 'paid') and were placed on {from}, on {to} or on a "
    "day in between, timestamps compared by their day. Customers with none get 0.",
};
static const char *const d_explicit[] = {
    "- `{otable}.{fk}` is the customer who placed the order; NULL for a guest checkout, and "
    "some orders refer to customers no longer in `{ctable}`: neither counts for any customer.\n"
    "- `{otable}.{status}` is 'paid', 'pending', 'cancelled' or 'refunded'; only 'paid' "
    "counts.\n- `{otable}.{date}` is ISO text 'YYYY-MM-DD HH:MM:SS'.\n- `{ctable}.{key}` is "
    "{keykind}; names are not unique.",
    "- `{ctable}.{key}` identifies a customer ({keykind}); names repeat.\n- `{otable}.{fk}` "
    "refers to it (NULL: guest checkout; an unknown id: a deleted customer; neither counts).\n"
    "- `{otable}.{status}`: 'paid', 'pending', 'cancelled' or 'refunded'.\n- `{otable}.{date}`:"
    " 'YYYY-MM-DD HH:MM:SS'.",
    "- `{otable}.{date}` holds timestamps 'YYYY-MM-DD HH:MM:SS'.\n- `{otable}.{status}` is one "
    "of 'paid', 'pending', 'cancelled', 'refunded'.\n- `{otable}.{fk}` is the customer "
    "(`{ctable}.{key}`, {keykind}) or NULL for a guest; orders of unknown customers count "
    "for nobody.\n- Customer names are not unique.",
    "- Customers: `{ctable}.{key}` ({keykind}), names not unique.\n- Orders: `{otable}.{fk}` "
    "(NULL for guests; some ids match no customer and count for nobody), `{otable}.{status}` "
    "('paid', 'pending', 'cancelled', 'refunded'), `{otable}.{date}` ('YYYY-MM-DD "
    "HH:MM:SS').",
};

static int generate(struct vat_task *t, struct vat_rng *rng, struct vat_err *e)
{
    struct vat_oc_question *q = vat_oc_question_new(t, rng, &kind);
    apply_question(q, vat_task_question(t, N_QUESTIONS));
    if (vat_oc_write(t, rng, q, e) != 0)
        return -1;

    char from[11], to[11], from_h[32], to_h[32];
    vat_fmt_date(q->lo, from);
    vat_fmt_date(q->hi, to);
    vat_prompt_human_date(q->lo, from_h);
    vat_prompt_human_date(q->hi, to_h);
    bool nat = vat_prompt_natural(t);
    const char *kv[] = {
        "ctable", q->ctable, "otable", q->otable, "key", q->key, "fk", q->fk,
        "date", q->date_col, "status", q->status_col, "from", from, "to", to,
        "from_h", from_h, "to_h", to_h,
        "keykind", q->coded ? "a text code, ordered as text" : "an integer",
        "every", nat ? vat_prompt_state(t, "customers_table") : "",
        "topic", "[[our paid orders|customer activity|the loyalty figures]]",
        NULL,
    };
    struct vat_buf b = VAT_BUF_INIT;
    if (vat_oc_prompt_data(&b, t, q, kv, e) != 0) {
        vat_buf_release(&b);
        return -1;
    }
    vat_buf_puts(&b, "\n");
    if (nat) {
        VAT_PROMPT_PUT(&b, t, 'd', d_natural, kv);
        vat_buf_puts(&b, "\n\n");
        VAT_PROMPT_PUT(&b, t, 'q', q_natural, kv);
        /* one draw per statement: an initializer list's order is unspecified */
        const char *by = vat_prompt_state(t, "date_column");
        const char *both = vat_prompt_state(t, "window");
        const char *ckv[] = {"by", by, "both", both, NULL};
        vat_buf_putc(&b, ' ');
        VAT_PROMPT_PUT(&b, t, 'c', c_natural, ckv);
    } else {
        vat_buf_puts(&b, "Columns:\n");
        VAT_PROMPT_PUT(&b, t, 'd', d_explicit, kv);
        vat_buf_puts(&b, "\n\n");
        VAT_PROMPT_PUT(&b, t, 'q', q_explicit, kv);
    }
    vat_buf_putc(&b, ' ');
    vat_oc_prompt_end(&b, t, q);
    return 0;
}

/* Every single mistake is proven to change the main fixture's rows (the
 * plans put customers without paid orders in the window, unpaid orders in
 * it and paid orders late on D2 in every main fixture), then the naive
 * query making all four is the task's trap. */
static int trap_answer(struct vat_task *t, struct vat_err *e)
{
    int all = 0;
    /* trap_answer may run again on a recrafted fixture (tests/test_analytics.c) */
    for (int i = 0; i < t->n_traps; i++) {
        free(t->traps[i].answer);
        t->traps[i].answer = NULL;
    }
    t->n_traps = 0;
    for (size_t i = 0; i < N_MISTAKES; i++) {
        if (vat_sqlgen_set_trap(t, vat_oc_query(t->priv, mistakes[i].bit), 0, 0, e) != 0)
            return -1;
        struct vat_trap *tp = &t->traps[t->n_traps++];
        tp->name = mistakes[i].name;
        tp->text = mistakes[i].text;
        tp->answer = t->trap;
        t->trap = NULL;
        all |= mistakes[i].bit;
    }
    return vat_sqlgen_set_trap(t, vat_oc_query(t->priv, all), 0, 0, e);
}

static const char *const giveaways[] = {
    "with 0", "listed with 0", "get 0", "zero", "LEFT JOIN", "ON clause", "inclusive",
    "both days", "included", "whatever the time", "calendar day", "by their day",
    "exactly 'paid'", "only 'paid' counts", "count for nobody", "neither counts", NULL,
};
/* The trap's corner, which a natural prompt never describes. */
static const char *const defects[] = {
    "no paid orders at all", "without orders", "never ordered", "count 1", NULL,
};
static const char *const answer_columns[] = {NULL};
static const char *const states_every[] = {"every customer", "each of our customers", NULL};
static const char *const states_paid[] = {"paid orders", NULL};
static const char *const states_day[] = {
    "by the day the order was placed", "by the date the order was placed", NULL,
};
static const char *const states_both[] = {
    "counting both end dates", "both end dates count", NULL,
};
static const struct vat_convention conventions[] = {
    {"customers_table", states_every},
    {"status_column", states_paid},
    {"date_column", states_day},
    {"window", states_both},
    {NULL, NULL},
};

const struct vat_template vat_tmpl_sql_paid_order_counts = {
    .version = VAT_TEMPLATE_V1,
    .name = "sql_paid_order_counts",
    .family = "sql",
    .answer_kind = "sql",
    .trap = "The naive query: the conditions in WHERE, COUNT(*), no status filter and the "
            "timestamps compared with the bare dates.",
    .summary = "One SQLite SELECT listing every customer with their number of paid orders "
               "placed from D1 through D2 inclusive (zero included), in a stated order.",
    .params = vat_oc_params,
    .default_count = 12,
    .generate = generate,
    .reference = vat_oc_reference,
    .confirm = vat_oc_confirm,
    .trap_answer = trap_answer,
    .check = vat_check_task,
    .giveaways = giveaways,
    .conventions = conventions,
    .defects = defects,
    .answer_columns = answer_columns,
};
