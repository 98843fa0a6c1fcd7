/* join_aggregate.c — the join_aggregate analytics template: a SQLite shop
 * database with orders(order_id, customer_id, amount, ordered_on) and
 * customer_history(customer_id, country, valid_from), where a customer has
 * one row per move, and the total order amount per customer's CURRENT
 * country (the country of the latest valid_from).  The trap joins every
 * history row, so an order of a customer who moved is counted once per
 * row (fan-out); every fixture holds a customer with three history rows
 * and orders, so the trap always differs.  Gold is SQL over the file
 * opened read-only; confirm aggregates plain row reads in C.  From level
 * 3 the trap modules act in the database's tables (ja_modules).
 * Exports vat_tmpl_join_aggregate. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analytics.h"
#include "anxl.h"
#include "progform.h"
#include "prompt.h"
#include "sqlgen.h"
#include "sqlio.h"
#include "trace.h"
#include "template.h"
#include "trapmod.h"
#include "values.h"

#define JA_MAX_COUNTRIES 10
#define JA_MAX_HIST 3
#define JA_REL_TOL 1e-9
#define JA_ABS_TOL 1e-6

static const char ja_schema[] =
    "CREATE TABLE orders (\n"
    "  order_id TEXT PRIMARY KEY,\n"
    "  customer_id TEXT NOT NULL,\n"
    "  amount REAL NOT NULL,\n"
    "  ordered_on TEXT NOT NULL\n"
    ");\n"
    "CREATE TABLE customer_history (\n"
    "  customer_id TEXT NOT NULL,\n"
    "  country TEXT NOT NULL,\n"
    "  valid_from TEXT NOT NULL\n"
    ");\n";
/* distractor_table: a CRM snapshot of the customers' countries, as of
 * one day before the latest move of the customer with three history
 * rows, who orders: read in place of the history, it gives that
 * customer's previous country (and leaves out whoever signed up later). */
static const char ja_distractor_schema[] = "CREATE TABLE customers (\n"
                                           "  customer_id TEXT PRIMARY KEY,\n"
                                           "  country TEXT NOT NULL,\n"
                                           "  synced_on TEXT NOT NULL\n"
                                           ");\n";
static const char *const ja_tables[] = {"orders", "customer_history", "customers"};
static const char *const ja_columns[] = {
    "orders.order_id",           "orders.customer_id",       "orders.amount",
    "orders.ordered_on",         "customer_history.customer_id",
    "customer_history.country", "customer_history.valid_from", "customers.customer_id",
    "customers.country",        "customers.synced_on",
};

/* Natural style: "by each customer's current country" is the domain
 * phrase, and the history table's meaning is a fact about the data. */
static const char *const ja_q_natural[] = {
    "What is our total order value per country, going by {where}?",
    "How much have customers in each country ordered, going by {where}?",
    "Could you total all orders by country, [[using|taking]] {where}?",
    "Per country, what is the order total if we go by {where}?",
    "I need order totals by country, [[with customers counted by|going by]] {where}.",
    "[[For the market review|For our expansion plan|For the country report]], what did "
    "customers order in total per country, by {where}?",
};
static const char *const ja_c_natural[] = {
    "[[Only|Just]] {countries} [[need to appear|go in the answer|should be listed]].",
    "List {countries}[[| only]].",
    "[[I only need|The answer covers|Leave in]] {countries}.",
    "Skip the rest: {countries} are enough.",
};
static const char *const ja_d_natural[] = {
    "Our shop's database is attached as `{rel}` (SQLite), with two tables.",
    "Here is the SQLite file `{rel}` from our shop; it has two tables.",
    "The shop data is in `{rel}`, an SQLite database of two tables.",
    "I've put our orders and customer history in the SQLite file `{rel}`.",
    "[[Attached|Below]] is `{rel}`, our shop's SQLite database with two tables.",
};
static const char *const ja_d_explicit[] = {
    "The SQLite database file `{rel}` holds two tables of an online shop.",
    "You are given the SQLite database `{rel}` with two tables of an online shop.",
    "The file `{rel}` is an SQLite database with two tables of an online shop.",
    "Two tables of an online shop are stored in the SQLite database file `{rel}`.",
};
/* The explicit question, ways of asking it; the rules that follow it are
 * the same. */
static const char *const ja_q_explicit[] = {
    "[[Question: what|What]] is the total `amount` of all orders per customer's current "
    "country?",
    "Group the orders by the current country of [[the customer who placed them|their "
    "customer]]: what is each country's total `amount`?",
    "For each country, how much `amount` do the orders of the customers currently living "
    "there add up to?",
    "Compute the total `amount` of the orders per current country of their customer.",
    "Give the total `amount` of the orders per current country of [[the customer who placed "
    "them|their customers]].",
};
static const char *const ja_r_explicit[] = {
    "[[Attribute every order to|Every order goes to|Count every order under]] the current "
    "country of [[the customer who placed it|its customer|the ordering customer]], even when "
    "the customer lived elsewhere on the order date, and count each order exactly once. [[List "
    "only|Include only]] countries that "
    "receive at least one order this way; [[a country with no order attributed to it is left "
    "out (not listed with 0)|a country with none is left out, not listed with 0|a country "
    "without an order is left out rather than listed with 0]]. [[Sum the amounts exactly|Sum "
    "exactly|Add up exactly]]: [[each total is a number with at most two decimals|a total has "
    "at most two decimals|every total carries two decimals at most]].",
};
/* The workbook's opening sentence. */
static const char *const ja_d_book_explicit[] = {
    "The Excel workbook `{rel}` holds two tables of an online shop, each on its own sheet.",
    "You are given the Excel workbook `{rel}`: two tables of an online shop, one per sheet.",
    "Two tables of an online shop are stored in the Excel workbook `{rel}`, each on a sheet "
    "of its own.",
    "The file `{rel}` is an Excel workbook with two tables of an online shop, one per sheet.",
};
static const char *const ja_d_book_natural[] = {
    "Our shop's data is in the Excel workbook `{rel}`, one table per sheet.",
    "Here is the workbook `{rel}` from our shop; each of its two sheets holds a table.",
    "I've exported our orders and customer history to `{rel}` (Excel), a sheet each.",
    "The shop data is in `{rel}`, an Excel file with one table on each of two sheets.",
};
static const char *const ja_giveaways[] = {
    "exactly once", "lived elsewhere", "left out", "not listed with 0", "latest `valid_from`",
    "tolerance", "Sum the amounts exactly", "double", NULL,
};
/* The join's trap, which a natural prompt never describes. */
static const char *const ja_defects[] = {
    "several history rows", "more than one history row", "moved", "fan", "twice", NULL,
};
static const char *const ja_answer_columns[] = {"amount", "customer_id", "country", "valid_from",
                                                NULL};
static const char *const ja_states_where[] = {
    "where each customer lives now", "the country each customer lives in today",
    "each customer's current country", NULL,
};
static const char *const ja_states_countries[] = {
    "the countries with orders", "countries that have orders",
    "the countries with at least one order", NULL,
};
static const struct vat_convention ja_conventions[] = {
    {"current_country_rule", ja_states_where},
    {"countries_without_orders", ja_states_countries},
    {NULL, NULL},
};

static const struct vat_param ja_params[] = {
    {.name = "rows_min", .type = VAT_PARAM_INT, .def = 20, .min = 5, .max = 2000,
     .doc = "fewest orders in a fixture", .role = VAT_PARAM_ROWS},
    {.name = "rows_max", .type = VAT_PARAM_INT, .def = 100, .min = 5, .max = 2000,
     .doc = "most orders in a fixture", .role = VAT_PARAM_ROWS},
    {.name = "customers_min", .type = VAT_PARAM_INT, .def = 6, .min = 2, .max = 500,
     .doc = "fewest customers"},
    {.name = "customers_max", .type = VAT_PARAM_INT, .def = 18, .min = 2, .max = 500,
     .doc = "most customers"},
    {.name = "countries_min", .type = VAT_PARAM_INT, .def = 3, .min = 2,
     .max = JA_MAX_COUNTRIES, .doc = "fewest distinct countries"},
    {.name = "countries_max", .type = VAT_PARAM_INT, .def = 6, .min = 2,
     .max = JA_MAX_COUNTRIES, .doc = "most distinct countries"},
    {.name = "moved_share", .type = VAT_PARAM_REAL, .def = 0.45, .min = 0, .max = 1,
     .doc = "chance that a customer has more than one history row"},
    {.name = "amount_max", .type = VAT_PARAM_INT, .def = 900, .min = 10, .max = 100000,
     .doc = "largest order amount, in whole currency units"},
    VAT_AXL_PARAMS,
    VAT_PROGFORM_PARAM,
    {0},
};

/* The workbook format: orders on sheet Orders, the history as a lookup
 * table on its own sheet; the trap stays the fan-out. */
#define JA_ORDERS_SHEET "Orders"
#define JA_HIST_SHEET "Customer history"
static const char *const ja_ocols[] = {"order_id", "customer_id", "amount", "ordered_on"};
static const char *const ja_hcols[] = {"customer_id", "country", "valid_from"};
static const enum vat_xl_kind ja_okind[] = {VAT_XLK_TEXT, VAT_XLK_TEXT, VAT_XLK_MONEY,
                                            VAT_XLK_TEXT};
static const enum vat_xl_kind ja_hkind[] = {VAT_XLK_TEXT, VAT_XLK_TEXT, VAT_XLK_TEXT};
static const char *const ja_titles[] = {"Orders, all time", "Orders since the shop opened"};
static const struct vat_axl_desc ja_desc = {
    .sheet = JA_ORDERS_SHEET, .what = "orders", .titles = ja_titles, .ntitles = 2,
    .kind = ja_okind, .totals_col = -1, .traps = 0,
    .decor = VAT_AXL_BIT(VAT_AXL_TITLE_NOTES) | VAT_AXL_BIT(VAT_AXL_TEXT_NUMBERS)};

/* What the generator planted, for confirm's cross-check. */
struct ja_priv {
    struct vat_an_tally current; /* current country -> cents, as drawn */
};

static void ja_priv_free(void *p)
{
    struct ja_priv *pv = p;
    vat_an_tally_release(&pv->current);
    free(pv);
}

struct ja_customer {
    char id[16];
    int nhist;
    int country[JA_MAX_HIST];
    int32_t from[JA_MAX_HIST];
    uint32_t weight; /* how often the customer orders */
};

/* One history row with its place in the table's storage order. */
struct ja_hist {
    int cust, k;
    int64_t key1, key2, key3;
};

static int ja_hist_cmp(const void *a, const void *b)
{
    const struct ja_hist *x = a, *y = b;
    if (x->key1 != y->key1)
        return (x->key1 > y->key1) - (x->key1 < y->key1);
    if (x->key2 != y->key2)
        return (x->key2 > y->key2) - (x->key2 < y->key2);
    return (x->key3 > y->key3) - (x->key3 < y->key3);
}

struct ja_order {
    int cust;
    int64_t cents;
    int32_t day;
};

static int ja_order_cmp(const void *a, const void *b)
{
    const struct ja_order *x = a, *y = b;
    /* a total order (equal keys mean equal orders), so the layout does
     * not depend on the libc's qsort */
    if (x->day != y->day)
        return (x->day > y->day) - (x->day < y->day);
    if (x->cust != y->cust)
        return (x->cust > y->cust) - (x->cust < y->cust);
    return (x->cents > y->cents) - (x->cents < y->cents);
}

/* Draws the customers' histories: one row, or two or three rows when the
 * customer moved (customer `three` always has three), each row's country
 * different from the one before (a move back to an earlier country is
 * possible), valid_from strictly increasing. */
static void ja_draw_customers(struct vat_rng *r, int side, struct ja_customer *cu, int nc,
                              int ncountry, int three, double moved_share)
{
    long id = (long)vat_rng_range(r, 10000, 60000);
    for (int i = 0; i < nc; i++) {
        struct ja_customer *c = &cu[i];
        id += (long)vat_rng_range(r, 1, 40);
        /* ids on the task's side (vat_side_owns): a history row's first cell */
        id = vat_side_next_id(side, "CUST-", 5, id);
        snprintf(c->id, sizeof c->id, "CUST-%05ld", id);
        c->nhist = 1;
        if (i == three)
            c->nhist = 3;
        else if (vat_rng_chance(r, moved_share))
            c->nhist = vat_rng_chance(r, 0.3) ? 3 : 2;
        c->country[0] = (int)vat_rng_below(r, (uint32_t)ncountry);
        c->from[0] = vat_date_from_civil(2016, 1, 1) + (int32_t)vat_rng_range(r, 0, 1400);
        for (int k = 1; k < c->nhist; k++) {
            c->country[k] =
                (c->country[k - 1] + 1 + (int)vat_rng_below(r, (uint32_t)ncountry - 1)) %
                ncountry;
            c->from[k] = c->from[k - 1] + (int32_t)vat_rng_range(r, 60, 700);
        }
        c->weight = (uint32_t)vat_rng_range(r, 1, 5);
    }
}

/* Plants the armed trap modules in the two tables (streams keyed by
 * `suffix`), then inserts their rows: the orders into table `orders`,
 * each amount as a number unless a module wrote it as text.  Stops at
 * the first failed insert, which the writer's commit reports. */
static int ja_insert(const struct vat_task *t, struct vat_sqlw *w, const char *orders,
                     const char *suffix, struct vat_csv *oc, struct vat_csv *hc)
{
    char purpose[48];
    snprintf(purpose, sizeof purpose, "%s.orders", suffix);
    vat_trapmod_plant(t, oc, purpose);
    snprintf(purpose, sizeof purpose, "%s.history", suffix);
    vat_trapmod_plant(t, hc, purpose);
    char *ins = vat_xasprintf("INSERT INTO %s VALUES (?1, ?2, ?3, ?4)", orders);
    int rc = 0;
    for (size_t i = 1; i < oc->nrows && rc == 0; i++) {
        const char *amount = vat_csv_get(oc, i, 2);
        char *end;
        double x = strtod(amount, &end);
        rc = *amount && !*end
                 ? vat_sqlw_insert(w, ins, "ttdt", vat_csv_get(oc, i, 0), vat_csv_get(oc, i, 1),
                                   x, vat_csv_get(oc, i, 3))
                 : vat_sqlw_insert(w, ins, "tttt", vat_csv_get(oc, i, 0), vat_csv_get(oc, i, 1),
                                   amount, vat_csv_get(oc, i, 3));
    }
    free(ins);
    for (size_t i = 1; i < hc->nrows && rc == 0; i++)
        rc = vat_sqlw_insert(w, "INSERT INTO customer_history VALUES (?1, ?2, ?3)", "ttt",
                             vat_csv_get(hc, i, 0), vat_csv_get(hc, i, 1), vat_csv_get(hc, i, 2));
    return rc;
}

/* With distractor_table armed, writes table `customers`: every customer
 * whose history starts by the snapshot day, with the country valid that
 * day, the day drawn from the task's stream "distractor<suffix>" within
 * the 30 days before the latest move of customer `three` (rows are 39
 * days apart at least, so its previous country holds that day). */
static int ja_insert_distractor(const struct vat_task *t, struct vat_sqlw *w, const char *suffix,
                                const struct ja_customer *cu, int nc, int three,
                                const char *const *countries, size_t *rows)
{
    *rows = 0;
    if (!(t->trapmods & VAT_TM_DISTRACTOR) || cu[three].nhist < 2)
        return 0;
    char purpose[48], day[11];
    snprintf(purpose, sizeof purpose, "distractor%s", suffix);
    struct vat_rng r;
    vat_rng_stream(&r, t->master_seed, t->tmpl->name, t->index, purpose, t->attempt, NULL);
    int32_t on = cu[three].from[cu[three].nhist - 1] - 1 - (int32_t)vat_rng_below(&r, 30);
    vat_fmt_date(on, day);
    int rc = 0;
    for (int i = 0; i < nc && rc == 0; i++) {
        int k = cu[i].nhist - 1;
        while (k >= 0 && cu[i].from[k] > on)
            k--;
        if (k >= 0 && (rc = vat_sqlw_insert(w, "INSERT INTO customers VALUES (?1, ?2, ?3)",
                                            "ttt", cu[i].id, countries[cu[i].country[k]],
                                            day)) == 0)
            ++*rows;
    }
    return rc;
}

/* With day_first_dates armed, the latest row of customer c (who moved
 * and orders) falls on day 19 of its month or earlier: written day first
 * ("19/..." or lower) it sorts below every ISO date, so a query comparing
 * the dates as written takes an earlier row, another country (rows are
 * 60 days apart at least, so the order holds). */
static void ja_early_latest(const struct vat_task *t, struct ja_customer *c)
{
    int y, m, d;
    if (!(t->trapmods & VAT_TM_DATES) || c->nhist < 2)
        return;
    vat_date_to_civil(c->from[c->nhist - 1], &y, &m, &d);
    if (d > 19)
        c->from[c->nhist - 1] -= d - 10;
}

/* Writes the fixture through the SQLite writer: orders by date (ids
 * ascending), history in one of three storage orders a real table shows
 * (a change log by date; by customer, oldest or newest row first). */
static int ja_write_book(struct vat_task *t, struct vat_axl_state *st,
                         const struct vat_csv *oc, const struct vat_csv *hc, struct vat_err *e);

static int ja_write(struct vat_task *t, struct vat_rng *r, struct vat_axl_state *st,
                    const char *rel, const struct ja_customer *cu, int nc, int three,
                    const char *const *countries, struct ja_order *ord, size_t nord,
                    struct vat_err *e)
{
    bool book = strcmp(st->format, "xlsx") == 0;
    bool distractor = !book && (t->trapmods & VAT_TM_DISTRACTOR);
    struct vat_sqlw w;
    struct vat_csv oc = VAT_CSV_INIT, hc = VAT_CSV_INIT;
    vat_csv_add_row(&oc, ja_ocols, 4);
    vat_csv_add_row(&hc, ja_hcols, 3);
    char *schema = vat_xasprintf("%s%s", ja_schema, distractor ? ja_distractor_schema : "");
    int opened = book ? 0 : vat_sqlw_open(&w, t->root, rel, schema, e);
    free(schema);
    if (opened != 0)
        return -1;
    qsort(ord, nord, sizeof *ord, ja_order_cmp);
    long oid = (long)vat_rng_range(r, 100000, 400000);
    char money[32], date[11];
    for (size_t i = 0; i < nord; i++) {
        char id[24];
        oid += (long)vat_rng_range(r, 1, 6);
        oid = vat_side_next_id(t->side, "SO-", 6, oid);
        snprintf(id, sizeof id, "SO-%06ld", oid);
        vat_fmt_cents(ord[i].cents, money, sizeof money);
        const char *cells[4] = {id, cu[ord[i].cust].id, money, vat_fmt_date(ord[i].day, date)};
        vat_csv_add_row(&oc, cells, 4);
    }
    size_t nh = 0;
    for (int i = 0; i < nc; i++)
        nh += (size_t)cu[i].nhist;
    struct ja_hist *h = vat_xcalloc(nh, sizeof *h);
    uint32_t mode = vat_rng_below(r, 3);
    size_t k = 0;
    for (int i = 0; i < nc; i++) {
        for (int j = 0; j < cu[i].nhist; j++, k++) {
            h[k].cust = i;
            h[k].k = j;
            /* customer indexes ascend with the ids */
            h[k].key1 = mode == 0 ? cu[i].from[j] : i;
            h[k].key2 = mode == 0 ? i : mode == 1 ? cu[i].from[j] : -(int64_t)cu[i].from[j];
            h[k].key3 = j;
        }
    }
    qsort(h, nh, sizeof *h, ja_hist_cmp);
    for (k = 0; k < nh; k++) {
        const struct ja_customer *c = &cu[h[k].cust];
        const char *cells[3] = {c->id, countries[c->country[h[k].k]],
                                vat_fmt_date(c->from[h[k].k], date)};
        vat_csv_add_row(&hc, cells, 3);
    }
    free(h);
    if (book) {
        int rc = ja_write_book(t, st, &oc, &hc, e);
        vat_csv_release(&oc);
        vat_csv_release(&hc);
        return rc;
    }
    size_t nrows = oc.nrows + hc.nrows - 2, ncust = 0;
    if (ja_insert(t, &w, "orders", "", &oc, &hc) == 0)
        ja_insert_distractor(t, &w, "", cu, nc, three, countries, &ncust);
    vat_csv_release(&oc);
    vat_csv_release(&hc);
    if (vat_sqlw_commit(&w, e) != 0)
        return -1;
    struct vat_fixture *f = vat_task_add_fixture(t, rel, "sqlite", "main");
    f->rows = (long)(nrows + ncust);
    size_t ncols = sizeof ja_columns / sizeof ja_columns[0] - (distractor ? 0 : 3);
    for (size_t i = 0; i < ncols; i++)
        json_array_append_new(f->columns, json_string(ja_columns[i]));
    return 0;
}

/* The workbook: the orders table on one sheet (a title and notes when
 * drawn, some amounts stored as text when drawn), the history as a
 * lookup table on another.  Records params.workbook in st->wb. */
static int ja_write_book(struct vat_task *t, struct vat_axl_state *st,
                         const struct vat_csv *oc, const struct vat_csv *hc, struct vat_err *e)
{
    struct vat_rng *r = &st->lay;
    size_t nr = oc->nrows - 1;
    bool *as_text = NULL;
    if (st->layouts & VAT_AXL_BIT(VAT_AXL_TEXT_NUMBERS)) {
        as_text = vat_xcalloc(nr * 4, sizeof *as_text);
        size_t cnt = 0;
        for (size_t i = 0; i < nr; i++) {
            bool pick = vat_rng_chance(r, 0.12);
            as_text[i * 4 + 2] = pick;
            cnt += pick;
        }
        if (cnt == 0)
            as_text[vat_rng_below(r, (uint32_t)nr) * 4 + 2] = true;
    }
    static const char *const notes[] = {"Amounts in EUR, as invoiced.",
                                        "Customers' countries are on the sheet '" JA_HIST_SHEET
                                        "'."};
    bool titled = st->title != NULL;
    struct vat_xl_table ot = {.title = st->title, .notes = notes, .nnotes = titled ? 2 : 0,
                              .data = oc, .kind = ja_okind, .as_text = as_text, .totals_col = -1};
    struct vat_xl_table ht = {.data = hc, .kind = ja_hkind, .totals_col = -1};
    struct vat_xl_book b = VAT_XL_BOOK_INIT;
    struct vat_xl_where ow, hw;
    uint32_t next;
    int rc = vat_xl_place(vat_xl_add_sheet(&b, JA_ORDERS_SHEET), 0, 0, &ot, &ow, &next, e);
    if (rc == 0)
        rc = vat_xl_place(vat_xl_add_sheet(&b, JA_HIST_SHEET), 0, 0, &ht, &hw, &next, e);
    free(as_text);
    if (rc == 0) {
        json_t *cols = json_array();
        for (size_t i = 0; i < 4; i++)
            json_array_append_new(cols, json_sprintf("%s.%s", JA_ORDERS_SHEET, ja_ocols[i]));
        for (size_t i = 0; i < 3; i++)
            json_array_append_new(cols, json_sprintf("%s.%s", JA_HIST_SHEET, ja_hcols[i]));
        rc = vat_xl_task_write(t, &b, ".xlsx", "main", (long)(nr + hc->nrows - 1), cols, e) < 0
                 ? -1
                 : 0;
    }
    vat_xl_release(&b);
    if (rc != 0)
        return -1;
    st->layouts |= VAT_AXL_BIT(VAT_AXL_LOOKUP_SHEET);
    json_t *lay = json_array();
    for (int l = 1; l < VAT_AXL_N; l++)
        if (st->layouts & VAT_AXL_BIT(l))
            json_array_append_new(lay, json_string(vat_axl_layout_names[l]));
    char a1[16], a2[16], b1[16], b2[16];
    vat_xl_addr(ow.first_row, 0, a1, sizeof a1);
    vat_xl_addr(ow.first_row + ow.nrows - 1, 3, a2, sizeof a2);
    vat_xl_addr(hw.first_row, 0, b1, sizeof b1);
    vat_xl_addr(hw.first_row + hw.nrows - 1, 2, b2, sizeof b2);
    st->wb = json_pack("{s:s, s:s?, s:s, s:o, s:s, s:s++, s:s++}", "sheet", JA_ORDERS_SHEET,
                       "table", st->title, "lookup_sheet", JA_HIST_SHEET, "layouts", lay, "trap",
                       "own", "range", a1, ":", a2, "lookup_range", b1, ":", b2);
    return 0;
}

/* What the two tables hold, the orders table called `orders` (the value
 * form) or by the program form's name, in the task's style (new string). */
/* The columns of the two tables, in each style. */
static const struct vat_prompt_col ja_ocols_natural[] = {
    {"order_id", ""},
    {"customer_id", "[[who placed it|the customer|who ordered]]"},
    {"amount", "[[order total, at most two decimals|the order total with up to two "
               "decimals|what the order came to]]"},
    {"ordered_on", "[[YYYY-MM-DD|the order date, YYYY-MM-DD|when it was placed, YYYY-MM-DD]]"},
};
static const struct vat_prompt_col ja_ocols_explicit[] = {
    {"order_id", "[[|the order number]]"},
    {"customer_id", "[[who placed it|the customer who placed it|the ordering customer]]"},
    {"amount", "[[the order total in currency units, at most two decimals|the order total in "
               "currency units with up to two decimals|the total of the order, in currency "
               "units with two decimals at most]]"},
    {"ordered_on", "[[YYYY-MM-DD|the order date, YYYY-MM-DD|the date of the order, "
                   "YYYY-MM-DD]]"},
};
static const struct vat_prompt_col ja_hcols_natural[] = {
    {"customer_id", "[[|whose country it is]]"},
    {"country", ""},
    {"valid_from", "[[YYYY-MM-DD, from when that country applies|the date that country "
                   "applies from, YYYY-MM-DD|when it took effect, YYYY-MM-DD|the first day it "
                   "holds, YYYY-MM-DD]]"},
};
static const struct vat_prompt_col ja_hcols_explicit[] = {
    {"customer_id", ""},
    {"country", "[[|the country set]]"},
    {"valid_from", "[[YYYY-MM-DD, the date from which that country applies|YYYY-MM-DD, the "
                   "first day the country holds|YYYY-MM-DD, when that country starts to "
                   "apply]]"},
};

/* The columns of the orders (o) and the history (h) for kv. */
static void ja_cols(struct vat_task *t, struct vat_buf *o, struct vat_buf *h)
{
    bool nat = vat_prompt_natural(t);
    vat_prompt_cols(o, t, nat ? ja_ocols_natural : ja_ocols_explicit, VAT_N_OF(ja_ocols_natural),
                    NULL);
    vat_prompt_cols(h, t, nat ? ja_hcols_natural : ja_hcols_explicit, VAT_N_OF(ja_hcols_natural),
                    NULL);
}

/* What the two tables hold, the orders table called `orders` (the value
 * form) or by the program form's name, in the task's style (new string). */
static char *ja_about(struct vat_task *t, const char *orders)
{
    struct vat_buf o = VAT_BUF_INIT, h = VAT_BUF_INIT;
    ja_cols(t, &o, &h);
    const char *kv[] = {"orders", orders, "ocols", o.data, "hcols", h.data, NULL};
    char *s;
    if (vat_prompt_natural(t))
        s = vat_prompt_text(
            t, 'x',
            "`{orders}`: {ocols}. `customer_history`: [[one row each time [[a customer's "
            "country|the country of a customer]] was [[set or changed|changed or first set]]|a "
            "row whenever [[a "
            "customer's country|the country of a customer]] was recorded or updated|a row each "
            "time [[a customer's country|the country of a customer]] was entered or "
            "changed]], with {hcols}.",
            kv);
    else
        s = vat_prompt_text(
            t, 'x',
            "`{orders}` has one row per order: {ocols}. `customer_history` records where each "
            "customer has lived: [[one row each time [[a customer's country|the country of a "
            "customer]] was [[set or changed|changed or first set]]|a row for every time [[a "
            "customer's country|the "
            "country of a customer]] was [[set or changed|changed or first set]]|a new row "
            "whenever [[a customer's "
            "country|the country of a customer]] was [[set or changed|changed or first "
            "set]]]], with {hcols}. [[A "
            "customer has one or more history rows|Each customer has at least one history "
            "row]]; their current country is the `country` of their history row with the "
            "latest `valid_from`.",
            kv);
    vat_buf_release(&o);
    vat_buf_release(&h);
    return s;
}

/* The question and what decides it, in the task's style, the same over
 * either format and both answer forms. */
static void ja_say_question(struct vat_buf *b, struct vat_task *t)
{
    if (vat_prompt_natural(t)) {
        const char *kv[] = {"where", vat_prompt_state(t, "current_country_rule"), NULL};
        VAT_PROMPT_PUT(b, t, 'q', ja_q_natural, kv);
        vat_buf_putc(b, ' ');
        const char *ckv[] = {"countries", vat_prompt_state(t, "countries_without_orders"),
                             NULL};
        VAT_PROMPT_PUT(b, t, 'c', ja_c_natural, ckv);
        return;
    }
    VAT_PROMPT_PUT(b, t, 'q', ja_q_explicit, NULL);
    vat_buf_putc(b, ' ');
    VAT_PROMPT_PUT(b, t, 'r', ja_r_explicit, NULL);
}

/* The question and the answer's form in the task's style, the same over
 * either format (ends after the answer sentence, or in the explicit
 * style the tolerance sentence, with its full stop). */
static void ja_prompt_question(struct vat_buf *b, struct vat_task *t)
{
    ja_say_question(b, t);
    vat_buf_puts(b, "\n\n");
    if (vat_prompt_natural(t)) {
        vat_prompt_answer(b, t, "[[a JSON object from each country, spelled as in `country`, to "
                                "its total as a number|a JSON object mapping every country (as "
                                "written in `country`) to its order total, a number]], "
                                "[[like|for example|e.g.]] "
                                "{\"<country>\": <total>}");
        return;
    }
    vat_prompt_answer(b, t, "[[an object whose keys are the country names spelled exactly as "
                            "in the `country` column and whose values are the totals as JSON "
                            "numbers|an object mapping each country name, spelled exactly as "
                            "in the `country` column, to its total as a JSON number]], [[for "
                            "example|like]] {\"<country>\": <total>, \"<other country>\": "
                            "<total>}. [[Key order does not matter|The order of the keys does "
                            "not matter|Keys may come in any order]]");
    vat_buf_putc(b, ' ');
    vat_prompt_tolerance(b, t, JA_REL_TOL, JA_ABS_TOL);
}

static void ja_prompt_book(struct vat_task *t, const struct vat_axl_state *st, const char *rel)
{
    struct vat_buf b = VAT_BUF_INIT;
    char titled[160] = "", etitled[160] = "";
    if (st->title) {
        snprintf(titled, sizeof titled, " (the table titled `%s`)", st->title);
        snprintf(etitled, sizeof etitled, " titled `%s`", st->title);
    }
    struct vat_buf o = VAT_BUF_INIT, h = VAT_BUF_INIT;
    ja_cols(t, &o, &h);
    const char *kv[] = {"rel", rel, "titled", titled, "etitled", etitled, "ocols", o.data,
                        "hcols", h.data, NULL};
    if (vat_prompt_natural(t)) {
        VAT_PROMPT_PUT(&b, t, 'd', ja_d_book_natural, kv);
        vat_prompt_say(&b, t, 'x',
                       " Sheet `" JA_ORDERS_SHEET "` [[holds the orders|has our orders|is the "
                       "order list]]{titled}: {ocols}. Sheet `" JA_HIST_SHEET "` has [[one row "
                       "each time [[a customer's country|the country of a customer]] was set "
                       "or changed|a row whenever [[a customer's country|the country of a "
                       "customer]] was recorded or updated|a row each time [[a customer's "
                       "country|the country of a customer]] was entered or changed]], with "
                       "{hcols}. [[A number stored as text is the same number|Numbers stored "
                       "as text count as numbers]].\n\n",
                       kv);
    } else {
        VAT_PROMPT_PUT(&b, t, 'd', ja_d_book_explicit, kv);
        vat_prompt_say(&b, t, 'x',
                       " The orders are the table{etitled} on sheet `" JA_ORDERS_SHEET "`, one "
                       "row per order: {ocols}. The table on sheet `" JA_HIST_SHEET "` records "
                       "where each customer has lived: [[one row each time [[a customer's "
                       "country|the country of a customer]] was [[set or changed|changed or "
                       "first set]]|a row for every "
                       "time [[a customer's country|the country of a customer]] was set or "
                       "changed|a new row whenever [[a customer's country|the country of a "
                       "customer]] was [[set or changed|changed or first set]]]], with "
                       "{hcols}. [[A customer has one or "
                       "more history rows|Each customer has at least one history row]]; their "
                       "current country is the `country` of their history row with the latest "
                       "`valid_from`. [[A number stored as text is the same number|Numbers "
                       "stored as text are the same numbers]].\n\n",
                       kv);
    }
    vat_buf_release(&o);
    vat_buf_release(&h);
    ja_prompt_question(&b, t);
    vat_buf_puts(&b, "\n\n");
    struct vat_xl_book book = VAT_XL_BOOK_INIT;
    struct vat_err e;
    t->self_contained = false;
    if (vat_xl_task_read(t, 0, &book, &e) == 0)
        t->self_contained = vat_xl_prompt(&b, t, 0, &book);
    vat_xl_release(&book);
    t->prompt = vat_buf_detach(&b);
}

static int ja_generate(struct vat_task *t, struct vat_rng *r, struct vat_err *e)
{
    struct vat_axl_state st;
    if (vat_axl_begin(t, &ja_desc, &st, e) != 0)
        return -1;
    bool book = strcmp(st.format, "xlsx") == 0;
    long rmin = vat_task_int(t, "rows_min"), rmax = vat_task_int(t, "rows_max");
    long cmin = vat_task_int(t, "customers_min"), cmax = vat_task_int(t, "customers_max");
    long kmin = vat_task_int(t, "countries_min"), kmax = vat_task_int(t, "countries_max");
    double moved_share = vat_task_real(t, "moved_share");
    int64_t max_cents = (int64_t)vat_task_int(t, "amount_max") * 100;

    long want = vat_rng_range(r, kmin, kmax);
    if (want > JA_MAX_COUNTRIES)
        want = JA_MAX_COUNTRIES;
    const char *countries[JA_MAX_COUNTRIES];
    int ncountry = (int)vat_gen_distinct(r, "country", countries, (size_t)want);
    if (ncountry < 2)
        return vat_err_set(e, "%s: the 'country' word list has fewer than 2 entries", t->id);

    long ncl = vat_rng_range(r, cmin, cmax);
    int nc = ncl < 2 ? 2 : (int)ncl;
    int three = (int)vat_rng_below(r, (uint32_t)nc);
    struct ja_customer *cu = vat_xcalloc((size_t)nc, sizeof *cu);
    ja_draw_customers(r, t->side, cu, nc, ncountry, three, moved_share);
    ja_early_latest(t, &cu[three]);
    uint32_t *weight = vat_xcalloc((size_t)nc, sizeof *weight);
    int nmoved = 0;
    for (int i = 0; i < nc; i++)
        weight[i] = cu[i].weight, nmoved += cu[i].nhist > 1;

    /* The customer with three rows orders at least once, so the fan-out
     * always inflates some total. */
    long nol = vat_rng_range(r, rmin, rmax);
    size_t nord = nol < 1 ? 1 : (size_t)nol;
    struct ja_order *ord = vat_xcalloc(nord, sizeof *ord);
    int32_t first = vat_date_from_civil(2023, 1, 1) + (int32_t)vat_rng_range(r, 0, 200);
    struct ja_priv *pv = vat_xcalloc(1, sizeof *pv);
    t->priv = pv;
    t->priv_free = ja_priv_free;
    for (size_t i = 0; i < nord; i++) {
        ord[i].cust = i == 0 ? three : (int)vat_rng_weighted(r, weight, (size_t)nc);
        int64_t hi = vat_rng_chance(r, 0.8) && max_cents > 20000 ? 20000 : max_cents;
        ord[i].cents = vat_gen_cents(r, 500, hi);
        ord[i].day = first + (int32_t)vat_rng_range(r, 0, 300);
        const struct ja_customer *c = &cu[ord[i].cust];
        vat_an_tally_add(&pv->current, countries[c->country[c->nhist - 1]], ord[i].cents);
    }

    char *rel = vat_task_fixture_relpath(t, book ? ".xlsx" : ".sqlite");
    int rc = ja_write(t, r, &st, rel, cu, nc, three, countries, ord, nord, e);
    free(weight);
    free(ord);
    free(cu);
    if (rc != 0) {
        free(rel);
        return -1;
    }

    if (book) {
        ja_prompt_book(t, &st, rel);
        free(rel);
        goto params;
    }
    struct vat_buf data = VAT_BUF_INIT;
    bool cut = false;
    size_t ntables = (t->trapmods & VAT_TM_DISTRACTOR) ? 3 : 2;
    if (vat_sqlgen_render(t->root, rel, ja_tables, ntables, vat_task_inline_cap(t), &data, &cut,
                          e) != 0) {
        vat_buf_release(&data);
        free(rel);
        return -1;
    }
    t->self_contained = !cut;
    struct vat_buf b = VAT_BUF_INIT;
    bool nat = vat_prompt_natural(t);
    if (nat) {
        const char *kv[] = {"rel", rel, NULL};
        VAT_PROMPT_PUT(&b, t, 'd', ja_d_natural, kv);
    } else {
        const char *kv[] = {"rel", rel, NULL};
        VAT_PROMPT_PUT(&b, t, 'd', ja_d_explicit, kv);
    }
    char *about = ja_about(t, "orders");
    vat_buf_printf(&b, " %s\n\n", about);
    free(about);
    ja_prompt_question(&b, t);
    vat_buf_printf(&b, "\n\nThe schema and %s (as SQL):\n\n```sql\n",
                   cut ? "the leading rows of each table" : "all rows");
    vat_buf_putn(&b, data.data, data.len);
    vat_buf_puts(&b, "```\n");
    if (cut)
        vat_buf_printf(&b, "\nOnly the leading rows fit here; the answer must cover every row "
                           "of the file `%s`.\n",
                       rel);
    vat_buf_release(&data);
    t->prompt = vat_buf_detach(&b);
    free(rel);

params:
    t->params = json_pack("{s:s, s:s, s:s, s:s, s:s}", "sum_of", "orders.amount", "group_by",
                          "current country", "current_country_rule",
                          "customer_history row with the latest valid_from", "join_key",
                          "customer_id", "countries_without_orders", "omitted");
    vat_axl_finish(t, &st);


    struct vat_an_spec s = {.shape = "object", .rel_tol = JA_REL_TOL, .abs_tol = JA_ABS_TOL};
    t->spec = vat_an_value_spec(&s);
    return 0;
}

/* The current-country aggregate: one history row per customer, the one
 * whose valid_from is the customer's latest. */
static const char ja_gold_sql[] =
    "SELECT h.country, SUM(CAST(round(o.amount * 100) AS INTEGER)) / 100.0 "
    "FROM orders AS o JOIN customer_history AS h ON h.customer_id = o.customer_id "
    "WHERE h.valid_from = (SELECT MAX(x.valid_from) FROM customer_history AS x "
    "WHERE x.customer_id = h.customer_id) "
    "GROUP BY h.country ORDER BY h.country";
/* The fan-out: every history row joins every order of its customer. */
static const char ja_trap_sql[] =
    "SELECT h.country, SUM(CAST(round(o.amount * 100) AS INTEGER)) / 100.0 "
    "FROM orders AS o JOIN customer_history AS h ON h.customer_id = o.customer_id "
    "GROUP BY h.country ORDER BY h.country";

/* Checks a file the question cannot be answered on: each query counts
 * offending rows and must count 0. */
static const struct vat_an_sanity ja_sanity[] = {
    {"SELECT COUNT(*) FROM (SELECT 1 FROM customer_history GROUP BY customer_id, valid_from "
     "HAVING COUNT(*) > 1)",
     "a customer has two history rows with the same valid_from"},
    {"SELECT COUNT(*) FROM customer_history WHERE typeof(valid_from) <> 'text' OR valid_from NOT "
     "GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]' OR typeof(country) <> 'text' OR "
     "country = ''",
     "a history row has no country or a valid_from that is not YYYY-MM-DD"},
    {"SELECT COUNT(*) FROM orders WHERE customer_id NOT IN (SELECT customer_id FROM "
     "customer_history)",
     "an order's customer has no history row"},
    {"SELECT COUNT(*) FROM orders WHERE typeof(amount) NOT IN ('real', 'integer') OR "
     "abs(amount * 100 - round(amount * 100)) > 1e-6",
     "an amount is not a number with at most two decimals"},
};

/* A workbook: both tables found through the reader by their column names
 * (the orders below their title when they have one), loaded into an
 * in-memory database with the SQLite fixture's column types, then the
 * same sanity checks and sql.  Returns a new object, or NULL with e set. */
static json_t *ja_query_book(const struct vat_task *t, const char *sql, struct vat_err *e)
{
    static const char *const otypes[] = {"TEXT", "TEXT", "REAL", "TEXT"};
    static const char *const htypes[] = {"TEXT", "TEXT", "TEXT"};
    const char *rel = t->fixture[0].path;
    const json_t *wb = json_object_get(t->params, "workbook");
    struct vat_xl_book book = VAT_XL_BOOK_INIT;
    if (vat_xl_task_read(t, 0, &book, e) != 0)
        return NULL;
    const struct vat_xl_sheet *os = vat_xl_find_sheet(&book, JA_ORDERS_SHEET);
    const struct vat_xl_sheet *hs = vat_xl_find_sheet(&book, JA_HIST_SHEET);
    struct vat_csv oc = VAT_CSV_INIT, hc = VAT_CSV_INIT;
    struct vat_xl_find_opts oo = {.title = json_string_value(json_object_get(wb, "table"))};
    struct vat_xl_where w;
    struct vat_err fe = {{0}};
    sqlite3 *db = NULL;
    json_t *out = NULL;
    if (!os || !hs) {
        vat_err_set(e, "%s: '%s' lacks the sheet '%s' or '%s'", t->id, rel, JA_ORDERS_SHEET,
                    JA_HIST_SHEET);
        goto done;
    }
    if (vat_xl_find(os, ja_ocols, ja_okind, 4, &oo, &oc, &w, &fe) != 0 ||
        vat_xl_find(hs, ja_hcols, ja_hkind, 3, NULL, &hc, &w, &fe) != 0) {
        vat_err_set(e, "%s: '%s': %s", t->id, rel, fe.msg);
        goto done;
    }
    if (sqlite3_open_v2(":memory:", &db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) !=
            SQLITE_OK ||
        vat_csv_to_sqlite(&oc, 0, db, "orders", otypes, 1, &fe) != 0 ||
        vat_csv_to_sqlite(&hc, 0, db, "customer_history", htypes, 1, &fe) != 0) {
        vat_err_set(e, "%s: '%s': cannot load the tables: %s", t->id, rel,
                    fe.msg[0] ? fe.msg : "out of memory");
        goto done;
    }
    for (size_t i = 0; i < sizeof ja_sanity / sizeof ja_sanity[0]; i++) {
        json_t *bad = vat_an_sql_json(db, ja_sanity[i].sql, VAT_AN_NUMBER, &fe);
        bool clean = bad && json_is_integer(bad) && json_integer_value(bad) == 0;
        json_decref(bad);
        if (!clean) {
            vat_err_set(e, "%s: '%s': %s", t->id, rel, fe.msg[0] ? fe.msg : ja_sanity[i].what);
            goto done;
        }
    }
    out = vat_an_sql_json(db, sql, VAT_AN_OBJECT, &fe);
    if (!out)
        vat_err_set(e, "%s: '%s': %s", t->id, rel, fe.msg);
done:
    sqlite3_close(db);
    vat_csv_release(&oc);
    vat_csv_release(&hc);
    vat_xl_release(&book);
    return out;
}

/* Runs sql (gold or trap) over the fixture opened read-only, after the
 * sanity checks.  Returns a new object, or NULL with e set. */
static json_t *ja_query_file(const struct vat_task *t, const char *sql, struct vat_err *e)
{
    if (strcmp(t->fixture[0].format, "xlsx") == 0)
        return ja_query_book(t, sql, e);
    return vat_an_db_query(t, 0, ja_sanity, sizeof ja_sanity / sizeof ja_sanity[0], sql,
                           VAT_AN_OBJECT, e);
}

static int ja_reference(struct vat_task *t, struct vat_err *e)
{
    return vat_an_gold_from(t, ja_query_file(t, ja_gold_sql, e), "the fixture has no order", e);
}

/* A customer's latest history row, found by plain row reads. */
struct ja_latest {
    const char *customer, *country, *from;
};

/* Returns the text of cell i of row, or NULL when it is not text. */
static const char *ja_text(const json_t *row, int i)
{
    return i < 0 ? NULL : json_string_value(json_array_get(row, (size_t)i));
}

/* A workbook's table as plain row reads: the cells of the range the
 * generator recorded in params.workbook[range_key] on the sheet named by
 * params.workbook[sheet_key], no header or title search; numbers as JSON
 * reals, text as strings, blanks as null.  *columns gets names.  Returns
 * the rows, or NULL with e set. */
static json_t *ja_book_rows(const struct vat_task *t, const char *sheet_key,
                            const char *range_key, const char *const *names, size_t n,
                            json_t **columns, struct vat_err *e)
{
    const json_t *wb = json_object_get(t->params, "workbook");
    const char *sheet = json_string_value(json_object_get(wb, sheet_key));
    const char *range = json_string_value(json_object_get(wb, range_key));
    const char *colon = range ? strchr(range, ':') : NULL;
    uint32_t r1, c1, r2, c2;
    if (!sheet || !colon || vat_xl_parse_addr(range, (size_t)(colon - range), &r1, &c1) != 0 ||
        vat_xl_parse_addr(colon + 1, strlen(colon + 1), &r2, &c2) != 0 || c2 - c1 + 1 != n) {
        vat_err_set(e, "%s: confirm: params lack the workbook's %s and %s", t->id, sheet_key,
                    range_key);
        return NULL;
    }
    vat_trace_note("xlsx cells by address", range);
    struct vat_xl_book book = VAT_XL_BOOK_INIT;
    if (vat_xl_task_read(t, 0, &book, e) != 0)
        return NULL;
    const struct vat_xl_sheet *s = vat_xl_find_sheet(&book, sheet);
    if (!s) {
        vat_xl_release(&book);
        vat_err_set(e, "%s: confirm: no sheet '%s'", t->id, sheet);
        return NULL;
    }
    json_t *rows = json_array();
    for (uint32_t r = r1; r <= r2; r++) {
        json_t *row = json_array();
        for (uint32_t c = c1; c <= c2; c++) {
            const struct vat_xl_cell *x = vat_xl_get(s, r, c);
            json_array_append_new(row, !x || x->type == VAT_XL_BLANK ? json_null()
                                       : x->type == VAT_XL_NUMBER    ? json_real(x->num)
                                       : x->type == VAT_XL_STRING    ? json_string(x->s)
                                                                     : json_boolean(x->b));
        }
        json_array_append_new(rows, row);
    }
    vat_xl_release(&book);
    *columns = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(*columns, json_string(names[i]));
    return rows;
}

/* rows (a table read as JSON rows, columns cols) with the armed trap
 * modules' cleaning, in C: every cell as text (numbers written back
 * exactly), through vat_trapmod_clean.  Takes rows; returns new rows. */
static json_t *ja_cleaned(const struct vat_task *t, json_t *rows, const json_t *cols)
{
    struct vat_csv c = VAT_CSV_INIT;
    size_t i, k;
    json_t *row, *cell;
    vat_csv_row_begin(&c);
    json_array_foreach(cols, k, cell) vat_csv_add(&c, json_string_value(cell));
    json_array_foreach(rows, i, row) {
        vat_csv_row_begin(&c);
        json_array_foreach(row, k, cell) {
            if (json_is_string(cell))
                vat_csv_add(&c, json_string_value(cell));
            else if (json_is_integer(cell))
                vat_csv_addf(&c, "%" JSON_INTEGER_FORMAT, json_integer_value(cell));
            else if (json_is_real(cell))
                vat_csv_addf(&c, "%.17g", json_real_value(cell));
            else
                vat_csv_add(&c, "");
        }
    }
    json_decref(rows);
    vat_trapmod_clean(t, &c);
    json_t *out = json_array();
    for (size_t r = 1; r < c.nrows; r++) {
        json_t *o = json_array();
        for (size_t j = 0; j < c.row[r].n; j++)
            json_array_append_new(o, json_string(vat_csv_get(&c, r, j)));
        json_array_append_new(out, o);
    }
    vat_csv_release(&c);
    return out;
}

/* C over plain row reads (SELECT * of each table): the latest history row
 * per customer by comparing valid_from texts (ISO dates order as text),
 * then each order's amount in integer cents added to its customer's
 * country; then the generator's planted totals. */
static int ja_confirm(const struct vat_task *t, struct vat_err *e)
{
    const char *rel = t->fixture[0].path;
    bool book = strcmp(t->fixture[0].format, "xlsx") == 0;
    json_t *hcols = NULL, *ocols = NULL;
    json_t *hist = book ? ja_book_rows(t, "lookup_sheet", "lookup_range", ja_hcols, 3, &hcols, e)
                        : vat_sqlgen_read_table(t->root, rel, "customer_history", &hcols, e);
    if (!hist)
        return -1;
    json_t *orders = book ? ja_book_rows(t, "sheet", "range", ja_ocols, 4, &ocols, e)
                          : vat_sqlgen_read_table(t->root, rel, "orders", &ocols, e);
    if (!orders) {
        json_decref(hist);
        json_decref(hcols);
        return -1;
    }
    if (t->trapmods && !book) {
        hist = ja_cleaned(t, hist, hcols);
        orders = ja_cleaned(t, orders, ocols);
    }
    int hc = vat_sqlgen_col(hcols, "customer_id"), hk = vat_sqlgen_col(hcols, "country");
    int hf = vat_sqlgen_col(hcols, "valid_from");
    int oc = vat_sqlgen_col(ocols, "customer_id"), oa = vat_sqlgen_col(ocols, "amount");
    int rc = -1;
    size_t nl = 0, i;
    struct ja_latest *latest = vat_xcalloc(json_array_size(hist) + 1, sizeof *latest);
    struct vat_an_tally sums = VAT_AN_TALLY_INIT;
    json_t *row;

    json_array_foreach(hist, i, row) {
        const char *c = ja_text(row, hc), *k = ja_text(row, hk), *f = ja_text(row, hf);
        if (!c || !k || !f) {
            vat_err_set(e, "%s: confirm: '%s' customer_history row %zu is not all text", t->id,
                        rel, i + 1);
            goto done;
        }
        size_t j = 0;
        while (j < nl && strcmp(latest[j].customer, c) != 0)
            j++;
        if (j == nl) {
            latest[nl++] = (struct ja_latest){c, k, f};
            continue;
        }
        int cmp = strcmp(f, latest[j].from);
        if (cmp == 0) {
            vat_err_set(e, "%s: confirm: '%s' customer '%s' has two rows from %s", t->id, rel, c,
                        f);
            goto done;
        }
        if (cmp > 0)
            latest[j] = (struct ja_latest){c, k, f};
    }
    json_array_foreach(orders, i, row) {
        const char *c = ja_text(row, oc);
        json_t *a = oa < 0 ? NULL : json_array_get(row, (size_t)oa);
        json_t *parsed = NULL;
        if (json_is_string(a)) { /* a workbook's number stored as text */
            char *end;
            double v = strtod(json_string_value(a), &end);
            if (*json_string_value(a) && !*end)
                a = parsed = json_real(v);
        }
        bool num = json_is_number(a);
        double y = num ? json_number_value(a) * 100.0 : 0;
        json_decref(parsed);
        if (!c || !num) {
            vat_err_set(e, "%s: confirm: '%s' orders row %zu lacks a customer or an amount",
                        t->id, rel, i + 1);
            goto done;
        }
        int64_t cents = (int64_t)(y < 0 ? y - 0.5 : y + 0.5);
        double off = y - (double)cents;
        if (off > 1e-6 || off < -1e-6) {
            vat_err_set(e, "%s: confirm: '%s' orders row %zu: amount is not in whole cents",
                        t->id, rel, i + 1);
            goto done;
        }
        size_t j = 0;
        while (j < nl && strcmp(latest[j].customer, c) != 0)
            j++;
        if (j == nl) {
            vat_err_set(e, "%s: confirm: '%s' orders row %zu: customer '%s' has no history",
                        t->id, rel, i + 1, c);
            goto done;
        }
        vat_an_tally_add(&sums, latest[j].country, cents);
    }
    rc = vat_an_confirm_value(t, vat_an_tally_cents_json(&sums), "c over plain row reads", 0,
                              0, e);
    if (rc == 0 && t->priv) {
        struct ja_priv *pv = t->priv;
        rc = vat_an_confirm_value(t, vat_an_tally_cents_json(&pv->current),
                                  "the generator's planted totals", 0, 0, e);
    }
done:
    vat_an_tally_release(&sums);
    free(latest);
    json_decref(hist);
    json_decref(hcols);
    json_decref(orders);
    json_decref(ocols);
    return rc;
}

static int ja_trap(struct vat_task *t, struct vat_err *e)
{
    return vat_an_trap_from(t, ja_query_file(t, ja_trap_sql, e));
}

/* ---- the program form ------------------------------------------------------ */

/* The orders table takes the task's composed name in the program form (the
 * database's names are otherwise fixed, and gold programs must differ
 * between tasks); customer_history keeps its name. */
static const char *const ja_pf_tables[] = {"orders", "sales_orders", "purchases", "order_book",
                                           "webshop_orders"};
static const char *const ja_pf_outs[] = {"total", "total_amount", "revenue", "order_total",
                                         "amount_sum"};

static char *ja_pf_question(struct vat_task *t)
{
    struct vat_buf b = VAT_BUF_INIT;
    ja_say_question(&b, t);
    return vat_buf_detach(&b);
}

static char *ja_pf_about(struct vat_task *t, const struct vat_pf_names *n)
{
    return ja_about(t, n->table);
}

static char *ja_pf_shape(struct vat_task *t, const struct vat_pf_names *n)
{
    const char *kv[] = {"out", n->out, "dir", n->descending ? "descending" : "ascending", NULL};
    if (vat_prompt_natural(t))
        return vat_prompt_text(
            t, 's',
            "[[Return|It should return|I'd like]] two columns, `country` (as stored) and "
            "`{out}` ([[the country's order total|its total]]), one row per country asked for, "
            "[[ordered|sorted]] by `country` {dir}.",
            kv);
    return vat_prompt_text(
        t, 's',
        "[[It must return|The result must have|Return]] exactly two columns, `country` (as "
        "stored) and `{out}` ([[the country's total `amount`, a number|a number: the total "
        "`amount` of the country|the country's `amount` summed, as a number]]), [[one row per "
        "country that receives at least one order and no other rows|a row for each country "
        "with at least one order and nothing else|one row for every country some order goes "
        "to, no other rows]], [[ordered|sorted]] by `country` {dir} "
        "([[SQLite's default text order|the default text order of SQLite|as SQLite orders text "
        "by default]]).",
        kv);
}

/* Each order joined to its customer's history row with no later row. */
static char *ja_pf_gold(const struct vat_task *t, const struct vat_pf_names *n)
{
    (void)t;
    return vat_xasprintf("SELECT h.country, SUM(o.amount) AS %s\n"
                         "FROM %s AS o\n"
                         "JOIN customer_history AS h ON h.customer_id = o.customer_id\n"
                         "WHERE NOT EXISTS (SELECT * FROM customer_history AS x\n"
                         "                  WHERE x.customer_id = h.customer_id "
                         "AND x.valid_from > h.valid_from)\n"
                         "GROUP BY h.country\nORDER BY h.country%s",
                         n->out, n->table, n->descending ? " DESC" : "");
}

/* The named mistake: every history row joined (fan-out). */
static char *ja_pf_trap(const struct vat_task *t, const struct vat_pf_names *n)
{
    (void)t;
    return vat_xasprintf("SELECT h.country, SUM(o.amount) AS %s\n"
                         "FROM %s AS o\n"
                         "JOIN customer_history AS h ON h.customer_id = o.customer_id\n"
                         "GROUP BY h.country\nORDER BY h.country%s",
                         n->out, n->table, n->descending ? " DESC" : "");
}

/* Variant k: new customers, countries and orders from the template's own
 * draws, with corner cases planted on the first customers.  Customer 0
 * has three history rows and orders (the fan-out inflates its totals; in
 * variant 1 it moves back to its first country, A -> B -> A); customer 1
 * lived first in a country nobody else ever has (a country with no order
 * attributed to it: only the fan-out lists it); customer 2 has no order
 * and a current country of its own (a query driven by the history lists
 * it with 0 or NULL); customer 3 moved after its orders (the country on
 * the order date is not the current one), in variant 2 on the very day of
 * one of them (a boundary of a date comparison).  The history is stored
 * as a change log (variant 1), by customer oldest first (variant 2) or
 * newest first (variant 3), so the last row stored is not the latest;
 * variant 1 has an order of 0.01 and variant 3 one of the largest amount
 * (boundary values).  The schema declares every column NOT NULL, so a
 * variant has no blank cell. */
static int ja_pf_variant_db(const struct vat_task *t, struct vat_rng *r, int k,
                            const struct vat_pf_names *n, struct vat_sqlw *w, struct vat_err *e)
{
    int ncountry = (int)vat_rng_range(r, 3, 5);
    const char *countries[JA_MAX_COUNTRIES];
    if ((int)vat_gen_distinct(r, "country", countries, (size_t)ncountry + 2) != ncountry + 2)
        return vat_err_set(e, "%s: the 'country' word list is too short", t->id);
    int ghost = ncountry, own = ncountry + 1; /* the past-only and the orderless country */
    int nc = (int)vat_rng_range(r, 6, 10);
    struct ja_customer *cu = vat_xcalloc((size_t)nc, sizeof *cu);
    ja_draw_customers(r, t->side, cu, nc, ncountry, 0, 0.5);
    if (k == 1)
        cu[0].country[2] = cu[0].country[0];
    ja_early_latest(t, &cu[0]);
    cu[1].nhist = 2;
    cu[1].country[0] = ghost;
    cu[1].country[1] = (int)vat_rng_below(r, (uint32_t)ncountry);
    cu[1].from[1] = cu[1].from[0] + (int32_t)vat_rng_range(r, 60, 700);
    cu[2].nhist = 1;
    cu[2].country[0] = own;
    cu[2].weight = 0;

    int64_t max_cents = (int64_t)vat_task_int(t, "amount_max") * 100;
    size_t nord = (size_t)vat_rng_range(r, 12, 30);
    struct ja_order *ord = vat_xcalloc(nord, sizeof *ord);
    uint32_t *weight = vat_xcalloc((size_t)nc, sizeof *weight);
    for (int i = 0; i < nc; i++)
        weight[i] = cu[i].weight;
    int32_t first = vat_date_from_civil(2023, 1, 1) + (int32_t)vat_rng_range(r, 0, 200);
    int32_t last = first;
    for (size_t i = 0; i < nord; i++) {
        ord[i].cust = i == 0 ? 0 : i == 1 ? 1 : i == 2 ? 3 : (int)vat_rng_weighted(r, weight,
                                                                                     (size_t)nc);
        ord[i].cents = vat_gen_cents(r, 500, max_cents > 20000 ? 20000 : max_cents);
        ord[i].day = first + (int32_t)vat_rng_range(r, 0, 300);
        if (ord[i].day > last)
            last = ord[i].day;
    }
    if (k == 1)
        ord[0].cents = 1;
    if (k == 3)
        ord[1].cents = max_cents;
    /* customer 3: one move, after every order (variant 2: on an order's day) */
    struct ja_customer *c3 = &cu[3];
    c3->nhist = 2;
    c3->country[0] = (int)vat_rng_below(r, (uint32_t)ncountry);
    c3->country[1] = (c3->country[0] + 1 + (int)vat_rng_below(r, (uint32_t)ncountry - 1)) %
                     ncountry;
    c3->from[0] = vat_date_from_civil(2016, 1, 1) + (int32_t)vat_rng_range(r, 0, 1400);
    c3->from[1] = k == 2 ? ord[2].day : last + (int32_t)vat_rng_range(r, 1, 90);
    free(weight);

    qsort(ord, nord, sizeof *ord, ja_order_cmp);
    struct vat_csv oc = VAT_CSV_INIT, hc = VAT_CSV_INIT;
    vat_csv_add_row(&oc, ja_ocols, 4);
    vat_csv_add_row(&hc, ja_hcols, 3);
    long oid = (long)vat_rng_range(r, 100000, 400000);
    char date[11], money[32];
    for (size_t i = 0; i < nord; i++) {
        char id[24];
        oid += (long)vat_rng_range(r, 1, 6);
        oid = vat_side_next_id(t->side, "SO-", 6, oid);
        snprintf(id, sizeof id, "SO-%06ld", oid);
        const char *cells[4] = {id, cu[ord[i].cust].id,
                                vat_fmt_cents(ord[i].cents, money, sizeof money),
                                vat_fmt_date(ord[i].day, date)};
        vat_csv_add_row(&oc, cells, 4);
    }
    free(ord);
    size_t nh = 0;
    for (int i = 0; i < nc; i++)
        nh += (size_t)cu[i].nhist;
    struct ja_hist *h = vat_xcalloc(nh, sizeof *h);
    int mode = k - 1; /* as ja_write: a change log; by customer, oldest or newest first */
    size_t at = 0;
    for (int i = 0; i < nc; i++)
        for (int j = 0; j < cu[i].nhist; j++, at++) {
            h[at].cust = i;
            h[at].k = j;
            h[at].key1 = mode == 0 ? cu[i].from[j] : i;
            h[at].key2 = mode == 0 ? i : mode == 1 ? cu[i].from[j] : -(int64_t)cu[i].from[j];
            h[at].key3 = j;
        }
    qsort(h, nh, sizeof *h, ja_hist_cmp);
    for (size_t i = 0; i < nh; i++) {
        const struct ja_customer *c = &cu[h[i].cust];
        const char *cells[3] = {c->id, countries[c->country[h[i].k]],
                                vat_fmt_date(c->from[h[i].k], date)};
        vat_csv_add_row(&hc, cells, 3);
    }
    free(h);
    char suffix[16];
    snprintf(suffix, sizeof suffix, ".v%d", k);
    int rc = ja_insert(t, w, n->table, suffix, &oc, &hc);
    size_t ncust;
    if (rc == 0)
        rc = ja_insert_distractor(t, w, suffix, cu, nc, 0, countries, &ncust);
    free(cu);
    vat_csv_release(&oc);
    vat_csv_release(&hc);
    return rc == 0 ? 0 : vat_err_set(e, "%s: variant %d: an insert failed", t->id, k);
}

/* ---- trap modules ------------------------------------------------------------ */

/* day_first_dates: the latest history row of every customer who moved
 * (all of them, mark_all: the one with three rows orders, so the mistake,
 * which loses that row, moves its orders to an earlier country); every
 * row for the others. */
static void ja_targets(const struct vat_task *t, const struct vat_csv *c, unsigned m, bool *is)
{
    (void)t;
    int cc = vat_csv_col(c, 0, "customer_id"), fc = vat_csv_col(c, 0, "valid_from");
    for (size_t i = 1; i < c->nrows; i++)
        is[i] = m != VAT_TM_DATES;
    if (m != VAT_TM_DATES || cc < 0 || fc < 0)
        return;
    for (size_t i = 1; i < c->nrows; i++) {
        const char *id = vat_csv_get(c, i, (size_t)cc);
        char mine[11], other[11];
        if (!vat_trapmod_day(vat_csv_get(c, i, (size_t)fc), mine))
            continue;
        bool moved = false, latest = true;
        for (size_t j = 1; j < c->nrows && latest; j++) {
            if (j == i || strcmp(vat_csv_get(c, j, (size_t)cc), id) != 0)
                continue;
            moved = true;
            latest = !vat_trapmod_day(vat_csv_get(c, j, (size_t)fc), other) ||
                     strcmp(other, mine) < 0;
        }
        is[i] = moved && latest;
    }
}

static const struct vat_trapmod_table ja_db_tables[] = {
    {.name = "orders", .columns = ja_ocols, .ncols = 4, .renamed = true},
    {.name = "customer_history", .columns = ja_hcols, .ncols = 3},
};

/* Order ids are unique and amounts positive; a test order adds to its
 * customer's country, an amount skipped lowers it. */
static const struct vat_trapmods ja_modules = {.amount = "amount",
                                               .id = "order_id",
                                               .date = "valid_from",
                                               .date_only = true,
                                               .mark_all = VAT_TM_DATES,
                                               .marked_only = VAT_TM_DATES,
                                               .targets = ja_targets,
                                               .db_tables = ja_db_tables,
                                               .ndb_tables = 2,
                                               .distractor = "customers",
                                               .distractor_for = "customer_history",
                                               .distractor_as =
                                                   "SELECT customer_id, country, synced_on AS "
                                                   "valid_from FROM customers",
                                               .distractor_is =
                                                   "a snapshot of the CRM taken on "
                                                   "`synced_on`, not kept up to date"};

static const struct vat_progform ja_progform = {
    .tables = ja_pf_tables,
    .ntables = sizeof ja_pf_tables / sizeof *ja_pf_tables,
    .outs = ja_pf_outs,
    .nouts = sizeof ja_pf_outs / sizeof *ja_pf_outs,
    .ordered = true,
    .kind = VAT_AN_OBJECT,
    .rel_tol = JA_REL_TOL,
    .abs_tol = JA_ABS_TOL,
    .nvariants = 3,
    .question = ja_pf_question,
    .shape = ja_pf_shape,
    .gold_sql = ja_pf_gold,
    .trap_sql = ja_pf_trap,
    .db_table = "orders",
    .db_about = ja_pf_about,
    .variant_db = ja_pf_variant_db,
};

const struct vat_template vat_tmpl_join_aggregate = {
    .version = VAT_TEMPLATE_V1,
    .name = "join_aggregate",
    .family = "analytics",
    .answer_kind = "value",
    .trap = "Joining orders to every customer_history row, so orders of customers who moved are "
            "counted once per row (fan-out).",
    .summary = "Total order amount per customer's current country (latest valid_from).",
    .params = ja_params,
    .default_count = 12,
    .generate = ja_generate,
    .reference = ja_reference,
    .confirm = ja_confirm,
    .trap_answer = ja_trap,
    .check = vat_check_task,
    .giveaways = ja_giveaways,
    .answer_columns = ja_answer_columns,
    .progform = &ja_progform,
    .conventions = ja_conventions,
    .defects = ja_defects,
    .modules = &ja_modules,
};
