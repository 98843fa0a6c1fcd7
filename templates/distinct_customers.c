/* distinct_customers.c — how many distinct customers ordered in month M,
 * over an orders CSV (order_id, customer_email, amount, ordered_on) whose
 * e-mail addresses were typed in several tools, so one customer shows up
 * in upper case, capitalised, or with spaces at either end.  The trap
 * counts the raw distinct strings; it is armed by construction: one
 * customer orders twice in M, once clean and once under a dirty spelling.
 * Written from templates/skeleton.c by the documented path
 * (docs/adding-a-template.md).  Exports vat_tmpl_distinct_customers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analytics.h"
#include "csvio.h"
#include "progform.h"
#include "prompt.h"
#include "template.h"
#include "trapmod.h"
#include "values.h"

#define DC_MAX_CUSTOMERS 40
#define DC_EMAIL 64

enum { C_ID, C_EMAIL, C_AMOUNT, C_DATE, DC_NCOLS };
static const char *const cols[DC_NCOLS] = {"order_id", "customer_email", "amount", "ordered_on"};

/* The question in both styles.  Natural: customers are e-mail addresses,
 * compared in lower case without the spaces around them, in the month of
 * `ordered_on`: conventions stated, never the addresses' defect. */
static const char *const dc_q_natural[] = {
    "How many different customers ordered from us in {when}?",
    "How many customers placed an order in {when}?",
    "Could you count the customers who bought something in {when}?",
    "In {when}, how many distinct customers did we have?",
    "I need the number of [[unique|distinct]] customers who ordered in {when}.",
    "[[For the monthly KPI sheet|For the retention report|For our board update]], how many "
    "customers ordered in {when}?",
};
static const char *const dc_c_natural[] = {
    "A customer is one e-mail address, {norm}; the month goes {by}.",
    "[[Count|Identify]] customers by e-mail address, {norm}, and take the month {by}.",
    "Customers are their e-mail addresses, {norm}; orders fall in the month {by}.",
    "{^by}, please, with each customer one address {norm}.",
};
/* The explicit question, ways of asking it; the rules that follow it are
 * the same. */
static const char *const dc_q_explicit[] = {
    "[[Question: how|How]] many distinct customers placed at least one order in {month} "
    "(`ordered_on` from {first} through {last})?",
    "Count the distinct customers with at least one order in {month} (`ordered_on` from "
    "{first} through {last}).",
    "In {month} (`ordered_on` from {first} through {last}), how many different customers "
    "ordered at least once?",
    "Compute the number of distinct customers who placed an order in {month}, that is with "
    "`ordered_on` from {first} through {last}.",
    "Give the number of distinct customers with an order in {month} (`ordered_on` from "
    "{first} through {last}).",
};
static const char *const dc_r_explicit[] = {
    "[[Two addresses belong to the same customer|Two addresses are one customer|Addresses "
    "name the same customer]] when they are equal after removing the spaces at both ends and "
    "lower-casing[[|, whatever their letter case and surrounding spaces in the file]].",
};
/* The columns as the data description lists them, in each style. */
static const struct vat_prompt_col dc_cols_natural[] = {
    {"order_id", ""},
    {"customer_email", "[[the customer's e-mail address|who ordered, by e-mail|the buyer's "
     "e-mail]]"},
    {"amount", "[[|the order total]]"},
    {"ordered_on", "[[YYYY-MM-DD|the order date, YYYY-MM-DD|when it was placed, YYYY-MM-DD]]"},
};
static const struct vat_prompt_col dc_cols_explicit[] = {
    {"order_id", ""},
    {"customer_email", "[[the customer's e-mail address|the e-mail address of the customer]]"},
    {"amount", "[[|the order amount]]"},
    {"ordered_on", "[[YYYY-MM-DD|the order date, YYYY-MM-DD]]"},
};
/* What the explicit description adds after the columns. */
static const char dc_cols_note[] =
    "[[The e-mail addresses were typed in several tools, so one customer's address "
    "can appear|One customer's address, typed in several tools, can appear|Because "
    "the addresses were typed in several tools, one customer's address may appear]] "
    "in different letter case and with spaces before or after it";
static const char *const dc_giveaways[] = {
    "removing the spaces", "lower-casing", "equal after", "must be exact", "tolerance", NULL,
};
/* The addresses' defect, which a natural prompt never describes. */
static const char *const dc_defects[] = {
    "typed", "letter case", "stray", "spaces around", "before or after", "shows up",
    "different case", NULL,
};
static const char *const dc_answer_columns[] = {"customer_email", "ordered_on", NULL};
static const char *const dc_states_norm[] = {
    "compared in lower case without surrounding spaces",
    "read in lower case, without leading or trailing spaces",
    "compared case-insensitively and trimmed of spaces", NULL,
};
static const char *const dc_states_month[] = {
    "by `ordered_on`", "by the order date in `ordered_on`", "according to `ordered_on`", NULL,
};
static const struct vat_convention dc_conventions[] = {
    {"key_normalisation", dc_states_norm},
    {"month", dc_states_month},
    {NULL, NULL},
};

/* The question and what decides it, in the task's style (both answer
 * forms), for the month of year. */
static void dc_say_question(struct vat_buf *b, struct vat_task *t, int year, int month)
{
    char when[32], ym[8], first[16], last[16];
    snprintf(when, sizeof when, "%s %d", vat_month_name(month), year);
    vat_fmt_month(year, month, ym);
    snprintf(first, sizeof first, "%s-01", ym);
    snprintf(last, sizeof last, "%s-%02d", ym, vat_month_days(year, month));
    if (vat_prompt_natural(t)) {
        const char *kv[] = {"when", when, NULL};
        VAT_PROMPT_PUT(b, t, 'q', dc_q_natural, kv);
        vat_buf_putc(b, ' ');
        /* one draw per statement: an initializer list's order is unspecified */
        const char *norm = vat_prompt_state(t, "key_normalisation");
        const char *by = vat_prompt_state(t, "month");
        const char *ckv[] = {"norm", norm, "by", by, NULL};
        VAT_PROMPT_PUT(b, t, 'c', dc_c_natural, ckv);
    } else {
        const char *kv[] = {"month", when, "first", first, "last", last, NULL};
        VAT_PROMPT_PUT(b, t, 'q', dc_q_explicit, kv);
        vat_buf_putc(b, ' ');
        VAT_PROMPT_PUT(b, t, 'r', dc_r_explicit, NULL);
    }
}

static const struct vat_param params[] = {
    {.name = "rows_min", .type = VAT_PARAM_INT, .def = 20, .min = 6, .max = 2000,
     .doc = "fewest data rows", .role = VAT_PARAM_ROWS},
    {.name = "rows_max", .type = VAT_PARAM_INT, .def = 60, .min = 6, .max = 2000,
     .doc = "most data rows", .role = VAT_PARAM_ROWS},
    {.name = "customers_min", .type = VAT_PARAM_INT, .def = 5, .min = 3,
     .max = DC_MAX_CUSTOMERS, .doc = "fewest distinct customers in the file"},
    {.name = "customers_max", .type = VAT_PARAM_INT, .def = 14, .min = 3,
     .max = DC_MAX_CUSTOMERS, .doc = "most distinct customers in the file"},
    {.name = "dirty_share", .type = VAT_PARAM_REAL, .def = 0.3, .min = 0, .max = 0.9,
     .doc = "chance that an order outside the planted rows spells its e-mail dirty"},
    VAT_PROGFORM_PARAM,
    {0},
};

/* The dirty spellings an e-mail address gets (all normalise back). */
static const enum vat_variant dirty_kinds[] = {VAT_VARIANT_UPPER, VAT_VARIANT_CAPITAL,
                                               VAT_VARIANT_LEAD, VAT_VARIANT_TRAIL,
                                               VAT_VARIANT_BOTH};
#define DC_NKINDS (sizeof dirty_kinds / sizeof dirty_kinds[0])

static char *gen_email(struct vat_rng *r, const void *arg, char *out, size_t cap)
{
    (void)arg;
    return vat_gen_email(r, out, cap);
}

struct dc_row {
    int32_t day;
    int cust;
    int kind; /* -1 clean, else an index into dirty_kinds */
    int64_t cents;
    size_t seq; /* draw order, the tie-break of the sort */
};

static int cmp_row(const void *a, const void *b)
{
    const struct dc_row *x = a, *y = b;
    if (x->day != y->day)
        return (x->day > y->day) - (x->day < y->day);
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* A day of month offset k (-1, 0, 1) around y-m, uniform in the month. */
static int32_t day_in(struct vat_rng *r, int y, int m, int k)
{
    int ry, rm;
    vat_month_add(y, m, k, &ry, &rm);
    int32_t first = vat_month_first_day(ry, rm);
    return first + (int32_t)vat_rng_below(r, (uint32_t)vat_month_days(ry, rm));
}

static int generate(struct vat_task *t, struct vat_rng *rng, struct vat_err *e)
{
    long lo = vat_task_int(t, "rows_min"), hi = vat_task_int(t, "rows_max");
    long clo = vat_task_int(t, "customers_min"), chi = vat_task_int(t, "customers_max");
    double dirty = vat_task_real(t, "dirty_share");
    size_t n = (size_t)vat_rng_range(rng, lo, hi > lo ? hi : lo);
    int ncust = (int)vat_rng_range(rng, clo, chi > clo ? chi : clo);
    int year = (int)vat_rng_range(rng, 2022, 2025);
    int month = (int)vat_rng_range(rng, 1, 12);

    char (*email)[DC_EMAIL] = vat_xcalloc((size_t)ncust, sizeof *email);
    if (vat_gen_unique(rng, gen_email, NULL, email[0], (size_t)ncust, sizeof email[0]) <
        (size_t)ncust) {
        free(email);
        return vat_err_set(e, "%s: cannot draw %d distinct e-mail addresses", t->id, ncust);
    }

    /* Planted rows: customer 0 orders twice in M, clean and dirty (the
     * trap's corner); one order on M's last day and one on the next
     * month's first (the month's bounds); the last customer orders only
     * outside M (a customer who must not count). */
    struct dc_row *rows = vat_xcalloc(n, sizeof *rows);
    int nm_days = vat_month_days(year, month);
    int32_t m_first = vat_month_first_day(year, month);
    for (size_t i = 0; i < n; i++) {
        struct dc_row *x = &rows[i];
        x->seq = i;
        x->kind = -1;
        if (i == 0 || i == 1) {
            x->cust = 0;
            x->day = day_in(rng, year, month, 0);
            if (i == 1)
                x->kind = (int)vat_rng_below(rng, DC_NKINDS);
        } else if (i == 2 || i == 3) {
            x->cust = ncust - 1;
            int k = vat_rng_chance(rng, 0.5) ? -1 : 1;
            x->day = day_in(rng, year, month, k);
        } else if (i == 4) {
            x->cust = (int)vat_rng_below(rng, (uint32_t)(ncust - 1));
            x->day = m_first + nm_days - 1;
        } else if (i == 5) {
            x->cust = (int)vat_rng_below(rng, (uint32_t)(ncust - 1));
            x->day = m_first + nm_days;
        } else {
            x->cust = (int)vat_rng_below(rng, (uint32_t)ncust);
            int k = (int)vat_rng_range(rng, -1, 1);
            if (x->cust == ncust - 1 && k == 0)
                k = 1;
            x->day = day_in(rng, year, month, k);
            if (vat_rng_chance(rng, dirty))
                x->kind = (int)vat_rng_below(rng, DC_NKINDS);
        }
        x->cents = vat_gen_cents(rng, 500, 40000);
    }
    qsort(rows, n, sizeof *rows, cmp_row);

    struct vat_csv c = VAT_CSV_INIT;
    vat_csv_add_row(&c, cols, DC_NCOLS);
    long id = (long)vat_rng_range(rng, 10000, 90000);
    size_t ndirty = 0;
    for (size_t i = 0; i < n; i++) {
        char spell[DC_EMAIL + 4], money[32], date[11];
        const char *addr = email[rows[i].cust];
        if (rows[i].kind >= 0)
            ndirty += vat_variant(addr, dirty_kinds[rows[i].kind], spell, sizeof spell);
        else
            snprintf(spell, sizeof spell, "%s", addr);
        id += (long)vat_rng_range(rng, 1, 4);
        id = vat_side_next_id(t->side, "ORD-", 6, id);
        vat_csv_row_begin(&c);
        vat_csv_addf(&c, "ORD-%06ld", id);
        vat_csv_add(&c, spell);
        vat_csv_add(&c, vat_fmt_cents(rows[i].cents, money, sizeof money));
        vat_csv_add(&c, vat_fmt_date(rows[i].day, date));
    }
    free(rows);
    free(email);
    /* before the file: the trap modules' marks read the month */
    char ym[8];
    vat_fmt_month(year, month, ym);
    t->params = json_pack("{s:s, s:s}", "month", ym, "key_normalisation",
                          "trim spaces at both ends, lower-case");
    int fi = vat_an_write_csv(t, &c, ".csv", "main", e);
    if (fi < 0) {
        vat_csv_release(&c);
        return -1;
    }
    struct vat_an_spec s = {.shape = "number", .integer = true, .rel_tol = 0, .abs_tol = 0};
    t->spec = vat_an_value_spec(&s);

    struct vat_buf b = VAT_BUF_INIT;
    bool nat = vat_prompt_natural(t);
    struct vat_buf cl = VAT_BUF_INIT;
    vat_prompt_cols(&cl, t, nat ? dc_cols_natural : dc_cols_explicit,
                    VAT_N_OF(dc_cols_natural), NULL);
    if (!nat) {
        vat_buf_puts(&cl, ". ");
        vat_prompt_say(&cl, t, 'k', dc_cols_note, NULL);
    }
    const char *kv[] = {
        "topic", "[[our customer numbers|the web shop's customers|last year's orders]]",
        "what", nat ? "[[our web-shop orders{#pl}|the orders from our web shop{#pl}|an export "
                      "of our shop's orders]]"
                    : "[[an export of web-shop orders|the orders of a web shop{#pl}|a web "
                      "shop's order export]]",
        "unit", "order",
        "cols", cl.data,
        NULL,
    };
    vat_prompt_open(&b, t, kv);
    vat_prompt_data(&b, t, kv);
    vat_buf_release(&cl);
    vat_buf_puts(&b, "\n\n");
    vat_an_prompt_csv(&b, t, fi, &c);
    vat_buf_puts(&b, "\n");
    dc_say_question(&b, t, year, month);
    vat_buf_puts(&b, "\n\n");
    if (nat)
        vat_prompt_answer(&b, t, "the count as [[one|a single]] JSON integer, like 7");
    else
        vat_prompt_answer(&b, t, "the number of customers as a JSON integer, for example 7. "
                                 "[[It must be exact|Only the exact count scores]]");
    vat_buf_puts(&b, "\n");
    t->prompt = vat_buf_detach(&b);
    vat_csv_release(&c);
    return 0;
}

/* Distinct customers who ordered in the asked month, from the file as
 * written: by the normalised address (gold) or by the raw cell (the trap).
 * Every row's amount and date must parse.  A JSON integer, or NULL with
 * e set. */
static json_t *count_from_file(const struct vat_task *t, bool normalise, struct vat_err *e)
{
    int y, m;
    struct vat_csv c = VAT_CSV_INIT;
    if (vat_an_param_month(t, "month", &y, &m, e) != 0 ||
        vat_an_read_csv(t, 0, cols, DC_NCOLS, &c, e) != 0)
        return NULL;
    int32_t first = vat_month_first_day(y, m), end = first + vat_month_days(y, m);
    struct vat_an_tally seen = VAT_AN_TALLY_INIT;
    json_t *v = NULL;
    for (size_t r = 1; r < c.nrows; r++) {
        int32_t day;
        int64_t cents;
        if (vat_an_csv_date(t, 0, &c, r, C_DATE, &day, e) != 0 ||
            vat_an_csv_cents(t, 0, &c, r, C_AMOUNT, &cents, e) != 0)
            goto out;
        const char *raw = vat_csv_get(&c, r, C_EMAIL);
        char key[DC_EMAIL + 8];
        vat_norm_label(raw, key, sizeof key);
        if (!key[0] || strlen(raw) >= DC_EMAIL + 8) {
            vat_err_set(e, "%s: '%s' record %zu: customer_email '%s' is blank or too long",
                        t->id, t->fixture[0].path, r + 1, raw);
            goto out;
        }
        if (day >= first && day < end)
            vat_an_tally_add(&seen, normalise ? key : raw, 1);
    }
    v = json_integer((json_int_t)seen.n);
out:
    vat_an_tally_release(&seen);
    vat_csv_release(&c);
    return v;
}

static int reference(struct vat_task *t, struct vat_err *e)
{
    return vat_an_gold_from(t, count_from_file(t, true, e), NULL, e);
}

/* SQL over the CSV loaded into SQLite: the month by its text prefix and
 * SQLite's own lower(trim()), not the C date parse and normalisation. */
static int confirm(const struct vat_task *t, struct vat_err *e)
{
    int y, m;
    if (vat_an_param_month(t, "month", &y, &m, e) != 0)
        return -1;
    char sql[200], ym[8];
    snprintf(sql, sizeof sql,
             "SELECT COUNT(DISTINCT lower(trim(customer_email))) FROM orders "
             "WHERE substr(ordered_on, 1, 7) = '%s'",
             vat_fmt_month(y, m, ym));
    struct vat_an_query q = {.table = "orders", .sql = sql, .kind = VAT_AN_NUMBER};
    return vat_an_confirm_query(t, &q, 0, 0, e);
}

static int trap_answer(struct vat_task *t, struct vat_err *e)
{
    return vat_an_trap_from(t, count_from_file(t, false, e));
}

/* ---- the program form ------------------------------------------------------ */

static const char *const dc_types[DC_NCOLS] = {"TEXT", "TEXT", "REAL", "TEXT"};
/* (No base is another with one of progform.c's prefixes or suffixes, so
 * composed table names stay distinct.) */
static const char *const dc_tables[] = {"orders", "customer_orders", "webshop_orders",
                                        "order_export", "orders_csv"};
static const char *const dc_outs[] = {"customers", "distinct_customers", "n_customers",
                                      "customer_count", "num_customers"};

static char *dc_pf_question(struct vat_task *t)
{
    int y = 2000, m = 1;
    struct vat_err e;
    if (vat_an_param_month(t, "month", &y, &m, &e) != 0)
        y = 2000, m = 1; /* not reached: the task's params were written by generate */
    struct vat_buf b = VAT_BUF_INIT;
    dc_say_question(&b, t, y, m);
    return vat_buf_detach(&b);
}

static char *dc_pf_shape(struct vat_task *t, const struct vat_pf_names *n)
{
    const char *kv[] = {"out", n->out, NULL};
    if (vat_prompt_natural(t))
        return vat_prompt_text(t, 's',
                               "[[Return|It should return|I'd like]] one row with one column, "
                               "`{out}` ([[the number of customers|how many customers]]).",
                               kv);
    return vat_prompt_text(t, 's',
                           "[[It must return|The result must be]] exactly one row with one "
                           "column, `{out}` (the number of distinct customers, an integer, "
                           "each customer counted once by the address normalised as the "
                           "question says).",
                           kv);
}

/* The query, over the month's bounds as the question states them
 * (`ordered_on` is text, YYYY-MM-DD, so text order is date order). */
static char *dc_pf_query(const struct vat_task *t, const struct vat_pf_names *n, bool normalise)
{
    int y = 2000, m = 1;
    struct vat_err e;
    if (vat_an_param_month(t, "month", &y, &m, &e) != 0)
        y = 2000, m = 1; /* not reached: the task's params were written by generate */
    char ym[8];
    vat_fmt_month(y, m, ym);
    return vat_xasprintf("SELECT COUNT(DISTINCT %s) AS %s\nFROM %s\n"
                         "WHERE ordered_on >= '%s-01' AND ordered_on <= '%s-%02d'",
                         normalise ? "LOWER(TRIM(customer_email))" : "customer_email", n->out,
                         n->table, ym, ym, vat_month_days(y, m));
}

static char *dc_pf_gold(const struct vat_task *t, const struct vat_pf_names *n)
{
    return dc_pf_query(t, n, true);
}

/* The named mistake: the raw distinct strings counted. */
static char *dc_pf_trap(const struct vat_task *t, const struct vat_pf_names *n)
{
    return dc_pf_query(t, n, false);
}

/* Variant k: new customers around the asked month.  Two customers order
 * twice in it, one clean and once with spaces at an edge (lower() alone
 * keeps them), the other clean and once in other letter case (trim()
 * alone keeps it): the trap counts both twice.  One customer orders only
 * on the month's first day, one only on its last day, one only on the
 * day before the month, one only on the day after it (the bounds: a
 * comparison or a date off by one takes or loses one of them), one only
 * in the months around it (a customer with no qualifying order); the
 * rest at random in the three months, dirty at times.  Amounts are
 * sometimes blank (an order without an amount is still an order);
 * variant 1 has an order of 0.00 in the month (the first day's), variant
 * 2 the last day's order without an amount.  The count differs from
 * the main fixture's (a hard-coded answer fails). */
static int dc_pf_variant(const struct vat_task *t, struct vat_rng *r, int k, struct vat_csv *c,
                         struct vat_err *e)
{
    static const enum vat_variant edge[3] = {VAT_VARIANT_TRAIL, VAT_VARIANT_LEAD,
                                             VAT_VARIANT_BOTH};
    static const enum vat_variant letter[3] = {VAT_VARIANT_UPPER, VAT_VARIANT_CAPITAL,
                                               VAT_VARIANT_UPPER};
    int y, m;
    if (vat_an_param_month(t, "month", &y, &m, e) != 0)
        return -1;
    json_t *main_count = count_from_file(t, true, e);
    if (!main_count)
        return -1;
    json_int_t main_n = json_integer_value(main_count);
    json_decref(main_count);

    int nfill = (int)vat_rng_range(r, 4, 9);
    /* with placeholder_keys armed, one more customer orders twice in the
     * month under one clean spelling: a row the placeholder can take */
    bool twice = (t->trapmods & VAT_TM_PLACEHOLDER) != 0;
    int ncust = 7 + nfill + twice + 1; /* the last one only when the counts would agree */
    char (*email)[DC_EMAIL] = vat_xcalloc((size_t)ncust, sizeof *email);
    if (vat_gen_unique(r, gen_email, NULL, email[0], (size_t)ncust, sizeof email[0]) <
        (size_t)ncust) {
        free(email);
        return vat_err_set(e, "%s: cannot draw %d distinct e-mail addresses", t->id, ncust);
    }
    int32_t first = vat_month_first_day(y, m), last = first + vat_month_days(y, m) - 1;
    struct dc_row rows[64];
    size_t n = 0;
    int kind_of[64]; /* the vat_variant kind of row i, -1 clean */
#define DC_PUT(cu, dy, kd)                                                                         \
    do {                                                                                           \
        rows[n] = (struct dc_row){.day = (dy), .cust = (cu), .kind = -1, .seq = n};                \
        kind_of[n++] = (kd);                                                                       \
    } while (0)
    int32_t d0 = day_in(r, y, m, 0);
    int32_t d1 = day_in(r, y, m, 0);
    DC_PUT(0, d0, -1);
    DC_PUT(0, d1, (int)edge[(k - 1) % 3]);
    int32_t d2 = day_in(r, y, m, 0);
    int32_t d3 = day_in(r, y, m, 0);
    DC_PUT(1, d2, -1);
    DC_PUT(1, d3, (int)letter[(k - 1) % 3]);
    DC_PUT(2, first, -1);
    DC_PUT(3, last, -1);
    DC_PUT(4, first - 1, -1);
    DC_PUT(5, last + 1, -1);
    int32_t before = day_in(r, y, m, -1);
    int32_t after = day_in(r, y, m, 1);
    DC_PUT(6, before, -1);
    DC_PUT(6, after, -1);
    json_int_t count = 4; /* customers 0..3 */
    for (int f = 0; f < nfill; f++) {
        int norders = (int)vat_rng_range(r, 1, 3);
        bool in_month = false;
        for (int o = 0; o < norders; o++) {
            int off = (int)vat_rng_range(r, -1, 1);
            int32_t day = day_in(r, y, m, off);
            int kd = vat_rng_chance(r, 0.3) ? (int)dirty_kinds[vat_rng_below(r, DC_NKINDS)] : -1;
            DC_PUT(7 + f, day, kd);
            in_month = in_month || off == 0;
        }
        count += in_month;
    }
    if (twice) {
        int32_t da = day_in(r, y, m, 0);
        int32_t db = day_in(r, y, m, 0);
        DC_PUT(7 + nfill, da, -1);
        DC_PUT(7 + nfill, db, -1);
        count++;
    }
    if (count == main_n) {
        int32_t day = day_in(r, y, m, 0);
        DC_PUT(ncust - 1, day, -1);
    }
#undef DC_PUT
    /* The amounts, then the order of the file: by day, ties in draw order. */
    for (size_t i = 0; i < n; i++)
        rows[i].cents = vat_gen_cents(r, 500, 40000);
    if (k == 1)
        rows[4].cents = 0; /* the first day's order */
    if (k == 2)
        rows[5].cents = -1; /* the last day's order, its amount blank */
    for (size_t i = 0; i < n; i++)
        rows[i].kind = kind_of[i];
    qsort(rows, n, sizeof *rows, cmp_row);

    vat_csv_add_row(c, cols, DC_NCOLS);
    long id = (long)vat_rng_range(r, 10000, 90000);
    for (size_t i = 0; i < n; i++) {
        char spell[DC_EMAIL + 4], money[32], date[11];
        const char *addr = email[rows[i].cust];
        if (rows[i].kind >= 0)
            vat_variant(addr, (enum vat_variant)rows[i].kind, spell, sizeof spell);
        else
            snprintf(spell, sizeof spell, "%s", addr);
        bool blank_amount = vat_rng_chance(r, 0.15) || rows[i].cents < 0;
        id += (long)vat_rng_range(r, 1, 4);
        id = vat_side_next_id(t->side, "ORD-", 6, id);
        vat_csv_row_begin(c);
        vat_csv_addf(c, "ORD-%06ld", id);
        vat_csv_add(c, spell);
        vat_csv_add(c, blank_amount ? "" : vat_fmt_cents(rows[i].cents, money, sizeof money));
        vat_csv_add(c, vat_fmt_date(rows[i].day, date));
    }
    free(email);
    return 0;
}

static const struct vat_progform dc_progform = {
    .tables = dc_tables,
    .ntables = sizeof dc_tables / sizeof *dc_tables,
    .outs = dc_outs,
    .nouts = sizeof dc_outs / sizeof *dc_outs,
    .columns = cols,
    .types = dc_types,
    .ncols = DC_NCOLS,
    .ordered = true,
    .kind = VAT_AN_NUMBER,
    .rel_tol = 0,
    .abs_tol = 0,
    .nvariants = 3,
    .question = dc_pf_question,
    .shape = dc_pf_shape,
    .gold_sql = dc_pf_gold,
    .trap_sql = dc_pf_trap,
    .variant = dc_pf_variant,
};

/* ---- trap modules ------------------------------------------------------------ */

#define DC_PLACEHOLDER "guest@checkout.invalid"

/* Marks the rows where module m's plant moves the count: for
 * day_first_dates every order in the month of the customer with the
 * fewest there (all of them, mark_all: the mistake loses that customer);
 * for placeholder_keys the month's orders whose clean spelling an earlier
 * order in the month has too, so the placeholder moves neither gold, nor
 * the native trap, nor the dates' customer (that earlier order stays); for
 * test_records the month's orders. */
static void dc_targets(const struct vat_task *t, const struct vat_csv *c, unsigned m, bool *is)
{
    int y, mo;
    struct vat_err e;
    int kc = vat_csv_col(c, 0, "customer_email"), dc = vat_csv_col(c, 0, "ordered_on");
    if (vat_an_param_month(t, "month", &y, &mo, &e) != 0 || kc < 0 || dc < 0)
        return;
    char ym[8];
    vat_fmt_month(y, mo, ym);
    /* the normalised key of each of the month's rows, "" outside it */
    char (*key)[DC_EMAIL + 8] = vat_xcalloc(c->nrows, sizeof *key);
    for (size_t i = 1; i < c->nrows; i++) {
        char day[11];
        if (vat_trapmod_day(vat_csv_get(c, i, (size_t)dc), day) && strncmp(day, ym, 7) == 0)
            vat_norm_label(vat_csv_get(c, i, (size_t)kc), key[i], sizeof key[i]);
    }
    if (m == VAT_TM_DATES) {
        size_t best = 0, best_n = 0;
        for (size_t i = 1; i < c->nrows; i++) {
            size_t n = 0;
            bool first = key[i][0] != 0;
            for (size_t j = 1; j < c->nrows && first; j++)
                if (strcmp(key[j], key[i]) == 0) {
                    first = j >= i;
                    n++;
                }
            if (first && (!best || n < best_n))
                best = i, best_n = n;
        }
        for (size_t i = 1; i < c->nrows && best; i++)
            is[i] = strcmp(key[i], key[best]) == 0;
    } else {
        for (size_t i = 1; i < c->nrows; i++) {
            const char *raw = vat_csv_get(c, i, (size_t)kc);
            is[i] = key[i][0] != 0;
            if (m != VAT_TM_PLACEHOLDER || !is[i])
                continue;
            is[i] = false;
            if (strcmp(raw, key[i]) != 0)
                continue;
            for (size_t j = 1; j < i && !is[i]; j++)
                is[i] = key[j][0] && strcmp(vat_csv_get(c, j, (size_t)kc), raw) == 0;
        }
    }
    free(key);
}

/* Order ids are unique; a test copy's e-mail is a test account's. */
static const struct vat_trapmods dc_modules = {.id = "order_id",
                                               .test_key = "customer_email",
                                               .date = "ordered_on",
                                               .date_only = true,
                                               .placeholder_col = "customer_email",
                                               .placeholder = DC_PLACEHOLDER,
                                               .mark_all = VAT_TM_DATES,
                                               .targets = dc_targets};

const struct vat_template vat_tmpl_distinct_customers = {
    .version = VAT_TEMPLATE_V1,
    .name = "distinct_customers",
    .family = "analytics",
    .answer_kind = "value",
    .trap = "Counting the raw distinct e-mail strings, so case and edge-space spellings of one "
            "customer count as several customers.",
    .summary = "How many distinct customers (e-mail trimmed and lower-cased) ordered in a month.",
    .params = params,
    .default_count = 12,
    .generate = generate,
    .reference = reference,
    .confirm = confirm,
    .trap_answer = trap_answer,
    .check = vat_check_task,
    .giveaways = dc_giveaways,
    .answer_columns = dc_answer_columns,
    .progform = &dc_progform,
    .conventions = dc_conventions,
    .defects = dc_defects,
    .modules = &dc_modules,
};
