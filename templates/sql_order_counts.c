/* sql_order_counts.c — the template "sql_order_counts": an SQLite database
 * with a customers table and an orders table, and the question "every
 * customer with their number of orders, zero included", answered with one
 * SQL SELECT.  The question is drawn per task: table and column names,
 * integer or coded customer ids, dates or timestamps, an optional window
 * on the order date (a calendar year, on or after a day, before a day, or
 * a day range), the order of the rows (by customer id either way, or by
 * the count with ties by id) and whether the customer's name is shown.
 * Checked OJ-style on the main fixture and held-out variants with corner
 * cases: customers without orders (always), customers whose orders all
 * fall outside the window, orders on each side of every window boundary,
 * orders with a NULL or an unknown customer, tied counts, customers
 * sharing a name, and a fixture where a single customer has orders
 * (the family's machinery: ordercounts.h).
 * The trap is COUNT(*) over the LEFT JOIN, which counts 1 for a customer
 * with no orders.  Exports vat_tmpl_sql_order_counts. */
#include <stdio.h>
#include <stdlib.h>

#include "ordercounts.h"
#include "prompt.h"
#include "template.h"
#include "values.h"

/* Every orders table and count name of the family. */
static const struct vat_oc_kind kind = {
    .n_orders_tables = VAT_N_OF(vat_oc_orders_tables),
    .n_count_names = VAT_N_OF(vat_oc_count_names),
};

/* ---- the question space ----------------------------------------------------- */

/* The gold query's table aliases (customers, orders). */
static const char *const customer_aliases[] = {"c", "cu", "cust", "a"};
static const char *const order_aliases[] = {"o", "od", "ord", "b"};

/* The question space: the names the gold query spells whatever the
 * drawn features (customer table and key, orders table and id, the count
 * alias, the two table aliases), as the digits of one mixed-radix number;
 * every list's entries are distinct, so two numbers name two different
 * gold queries.  11,520 questions. */
#define N_QUESTIONS                                                                           \
    (VAT_N_OF(vat_oc_customer_tables) * VAT_N_OF(vat_oc_orders_tables) *                      \
     VAT_N_OF(vat_oc_count_names) * VAT_N_OF(customer_aliases) * VAT_N_OF(order_aliases))

/* Replaces the drawn names with the ones question number k decodes to.
 * The draws they replace stay in the stream, so every later draw of the
 * task (the window, the fixture rows) is what it was. */
static void apply_question(struct vat_oc_question *q, uint64_t k)
{
    const struct vat_oc_customer_choice *cc =
        &vat_oc_customer_tables[vat_question_digit(&k, VAT_N_OF(vat_oc_customer_tables))];
    q->ctable = cc->table;
    q->key = cc->key;
    q->fk = cc->fk;
    q->code_prefix = cc->code_prefix;
    const struct vat_oc_orders_choice *oc =
        &vat_oc_orders_tables[vat_question_digit(&k, VAT_N_OF(vat_oc_orders_tables))];
    q->otable = oc->table;
    q->oid = oc->id;
    q->count_name = vat_oc_count_names[vat_question_digit(&k, VAT_N_OF(vat_oc_count_names))];
    q->ca = customer_aliases[vat_question_digit(&k, VAT_N_OF(customer_aliases))];
    q->oa = order_aliases[vat_question_digit(&k, VAT_N_OF(order_aliases))];
}

/* ---- the question as text ---------------------------------------------------- */

/* "placed in 2023", "placed on or after 2023-04-01", ... */
static void put_window_text(struct vat_buf *b, const struct vat_oc_question *q)
{
    char d1[11], d2[11];
    switch (q->filter) {
    case VAT_OC_YEAR: vat_buf_printf(b, "placed in the calendar year %04d", q->year); break;
    case VAT_OC_SINCE:
        vat_buf_printf(b, "placed on or after %s", vat_fmt_date(q->lo, d1));
        break;
    case VAT_OC_BEFORE: vat_buf_printf(b, "placed before %s", vat_fmt_date(q->hi + 1, d1)); break;
    case VAT_OC_RANGE:
        vat_buf_printf(b, "placed from %s through %s (both days included)",
                       vat_fmt_date(q->lo, d1), vat_fmt_date(q->hi, d2));
        break;
    default: vat_buf_puts(b, "ever placed"); break;
    }
}

/* Phrasings of both styles. */
static const char *const d_explicit[] = {"Columns:", "The columns:", "About the columns:",
                                         "What the columns hold:", "[[Column|Schema]] notes:"};
/* The explicit question, ways of asking it: {t} the customers table,
 * {window} "placed from ... through ..." and the like. */
static const char *const q_explicit[] = {
    "Task: write one SQLite SELECT statement that lists every customer in `{t}` with the "
    "number of orders they {window}.",
    "Which SQLite SELECT statement lists each customer in `{t}` together with how many orders "
    "they {window}?",
    "Give a SQLite query returning every customer in `{t}` and the number of orders they "
    "{window}.",
    "One SQLite SELECT statement should list all customers in `{t}`, each with the number of "
    "orders they {window}.",
    "[[Write|Give]] a single SELECT (SQLite) over these tables: every customer in `{t}`, with "
    "how many orders they {window}.",
};
static const char *const d_natural[] = {
    "`{otable}.{fk}` is who placed the order (NULL for a guest checkout; some orders belong "
    "to customers since removed from `{ctable}`), and `{otable}.{date}` when it was placed "
    "({fmt}). `{ctable}.{key}` is {keykind}; names can repeat.",
    "In `{otable}`, `{fk}` points at `{ctable}.{key}` ({keykind}; NULL for guests, and some "
    "point at customers no longer on file) and `{date}` is the order time ({fmt}). Two "
    "customers may share a name.",
    "Each `{otable}` row is an order: `{fk}` the customer (a `{ctable}.{key}`, {keykind}, or "
    "NULL for a guest; a few refer to customers no longer on file), `{date}` when it was "
    "placed ({fmt}). Customer names are not unique.",
    "Orders point at their customer through `{otable}.{fk}` (`{ctable}.{key}` is {keykind}; "
    "guests have NULL, and some ids are of customers since removed); `{otable}.{date}` is the "
    "order time, {fmt}. Names do not identify customers.",
    "[[The orders are in|Orders live in]] `{otable}`, each with its customer in `{fk}` (a "
    "`{ctable}.{key}`, {keykind}; NULL for a guest checkout, sometimes a customer since "
    "removed) and the time it was placed in `{date}` ({fmt}). [[Names can repeat|Two customers "
    "may share a name]].",
};
static const char *const q_natural[] = {
    "Sales ops would like {every} in `{ctable}` with how many orders they placed{win}.",
    "How many orders did {every} (all of `{ctable}`) place{win}?",
    "Can you pull, for {every} on file in `{ctable}`, their number of orders{win}?",
    "We need the order count{win} of {every} in `{ctable}`, please.",
    "[[For the account review|For our CRM clean-up|For the loyalty scheme]], could you count "
    "the orders{win} of {every} in `{ctable}`?",
};
static const char *const c_natural[] = {
    "{^by}, {both}.",
    "Orders count {by} ({both}).",
    "[[Go|Count]] {by}, {both}.",
};
static const char *const giveaways[] = {
    "with 0", "listed with 0", "zero", "LEFT JOIN", "COUNT(", "both days included",
    "calendar day of its timestamp", "neither kind of order counts", "play no part", NULL,
};
/* The trap's corner, which a natural prompt never describes. */
static const char *const defects[] = {
    "no orders at all", "without orders", "never ordered", "count 1", NULL,
};
static const char *const answer_columns[] = {NULL};
static const char *const states_every[] = {"every customer", "each of our customers", NULL};
static const struct vat_convention conventions[] = {
    {"customers_table", states_every},
    {NULL, NULL},
};

/* The natural question: columns as facts, the window in people's words,
 * its bounds and the day an order counts on as conventions. */
static void natural_question(struct vat_buf *b, struct vat_task *t, const struct vat_oc_question *q)
{
    char h1[32], h2[32], win[96] = "";
    switch (q->filter) {
    case VAT_OC_YEAR: snprintf(win, sizeof win, " in %04d", q->year); break;
    case VAT_OC_SINCE:
        vat_prompt_human_date(q->lo, h1);
        snprintf(win, sizeof win, " since %s", h1);
        break;
    case VAT_OC_BEFORE:
        vat_prompt_human_date(q->hi + 1, h1);
        snprintf(win, sizeof win, " before %s", h1);
        break;
    case VAT_OC_RANGE:
        vat_prompt_human_date(q->lo, h1);
        vat_prompt_human_date(q->hi, h2);
        snprintf(win, sizeof win, " from %s to %s", h1, h2);
        break;
    default: break;
    }
    const char *kv[] = {
        "ctable", q->ctable, "otable", q->otable, "key", q->key, "fk", q->fk,
        "date", q->date_col, "fmt", vat_oc_date_format(q), "win", win,
        "keykind", q->coded ? "a text code, ordered as text" : "an integer",
        "every", vat_prompt_state(t, "customers_table"),
        NULL,
    };
    vat_buf_puts(b, "\n");
    VAT_PROMPT_PUT(b, t, 'd', d_natural, kv);
    vat_buf_puts(b, "\n\n");
    VAT_PROMPT_PUT(b, t, 'q', q_natural, kv);
    if (q->filter == VAT_OC_RANGE) {
        /* "by" is grammar: realise it, then the sentence. */
        char *by = vat_prompt_text(t, 'c',
                                   "[[by the day the order was placed|by the date the order "
                                   "was placed]]",
                                   NULL);
        const char *ckv[] = {"by", by, "both", "counting both end dates", NULL};
        vat_buf_putc(b, ' ');
        VAT_PROMPT_PUT(b, t, 'c', c_natural, ckv);
        free(by);
    }
    vat_buf_puts(b, " ");
}

/* The explicit question: every rule spelled out, the trap's corner
 * included. */
static void explicit_question(struct vat_buf *b, struct vat_task *t,
                              const struct vat_oc_question *q)
{
    vat_buf_puts(b, "\n");
    VAT_PROMPT_PUT(b, t, 'd', d_explicit, NULL);
    vat_buf_puts(b, "\n");
    const char *kv[] = {"ctable", q->ctable, "key", q->key, "otable", q->otable, "fk", q->fk,
                        "name", q->name_col, "date", q->date_col, "fmt", vat_oc_date_format(q),
                        "keykind", q->coded ? "a text code, ordered as text" : "an integer",
                        "day", q->timestamps ? "; an order belongs to the calendar day of its "
                                               "timestamp"
                                             : "",
                        NULL};
    vat_prompt_say(b, t, 'x',
                   "- `{ctable}.{key}` identifies a customer ({keykind}); `{name}` is the "
                   "customer's name, and names are not unique.\n"
                   "- `{otable}.{fk}` is the customer who placed the order. It is NULL for a "
                   "guest checkout, and some orders refer to customers that are no longer in "
                   "`{ctable}`; neither kind of order counts for any customer.\n"
                   "- `{otable}.{date}` is [[when the order was placed|the time the order was "
                   "placed]], ISO text '{fmt}'{day}.\n"
                   "- `city`, `signed_up_on`, `channel` and `amount` play no part in the "
                   "question; every order counts whatever its channel or amount.\n",
                   kv);
    vat_buf_puts(b, "\n");
    struct vat_buf window = VAT_BUF_INIT;
    put_window_text(&window, q);
    const char *qkv[] = {"t", q->ctable, "window", window.data, NULL};
    VAT_PROMPT_PUT(b, t, 'q', q_explicit, qkv);
    vat_buf_release(&window);
    vat_buf_printf(b, " A customer with no %sorder is listed with 0. ",
                   q->filter == VAT_OC_NONE ? "" : "such ");
}

/* ---- the template callbacks ------------------------------------------------- */

static int generate(struct vat_task *t, struct vat_rng *rng, struct vat_err *e)
{
    struct vat_oc_question *q = vat_oc_question_new(t, rng, &kind);
    apply_question(q, vat_task_question(t, N_QUESTIONS));
    if (vat_oc_write(t, rng, q, e) != 0)
        return -1;
    struct vat_buf b = VAT_BUF_INIT;
    const char *kv[] = {"topic", "[[our customer list|the shop's order history|customer "
                                 "activity]]", NULL};
    if (vat_oc_prompt_data(&b, t, q, kv, e) != 0) {
        vat_buf_release(&b);
        return -1;
    }
    if (vat_prompt_natural(t))
        natural_question(&b, t, q);
    else
        explicit_question(&b, t, q);
    vat_oc_prompt_end(&b, t, q);
    return 0;
}

static int trap_answer(struct vat_task *t, struct vat_err *e)
{
    /* Every fixture plants customers without orders, which
     * vat_sqlgen_set_trap proves change the main fixture's result. */
    return vat_sqlgen_set_trap(t, vat_oc_query(t->priv, VAT_OC_M_STAR), 0, 0, e);
}

const struct vat_template vat_tmpl_sql_order_counts = {
    .version = VAT_TEMPLATE_V1,
    .name = "sql_order_counts",
    .family = "sql",
    .answer_kind = "sql",
    .trap = "COUNT(*) over the LEFT JOIN, which counts 1 for a customer with no orders.",
    .summary = "One SQLite SELECT listing every customer with their number of orders (zero "
               "included), optionally within a date window, in a stated order.",
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
