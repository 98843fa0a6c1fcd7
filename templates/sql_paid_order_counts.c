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
 * task (as in sql_order_counts, whose fixture plans this file adapts), the
 * names and the window's first day from the template's question space
 * (docs/scale.md), so no two tasks share their gold query; held-
 * out variants add corner cases: customers with only unpaid orders, only
 * orders outside the window, orders a second either side of each bound,
 * guest checkouts and unknown customers, ties.
 * Exports vat_tmpl_sql_paid_order_counts. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prompt.h"
#include "sqlgen.h"
#include "template.h"
#include "values.h"
#include "verifiers.h"

#define REL_TOL 0.0
#define ABS_TOL 0.0

static const struct vat_param params[] = {
    {"rows_min", VAT_PARAM_INT, 30, NULL, 12, 2000, "fewest orders in the main fixture"},
    {"rows_max", VAT_PARAM_INT, 90, NULL, 12, 5000, "most orders in the main fixture"},
    {"variants", VAT_PARAM_INT, 3, NULL, 2, 6, "held-out variant fixtures per task"},
    {"hardness", VAT_PARAM_REAL, 0.5, NULL, 0, 1,
     "chance of each harder feature: a date window, timestamps, ordering by the count, the "
     "name column"},
    {0},
};

/* ---- the question space ----------------------------------------------------- */

struct customer_choice {
    const char *table, *key, *fk, *code_prefix;
};

/* The customer table, its key, and the column of the orders table that
 * refers to it (the key is sometimes a bare "id"). */
static const struct customer_choice customer_tables[] = {
    {"customers", "customer_id", "customer_id", "C-"},
    {"customers", "id", "customer_id", "CUS-"},
    {"clients", "client_id", "client_id", "CL-"},
    {"clients", "id", "client_id", "CLI-"},
    {"accounts", "account_id", "account_id", "ACC-"},
    {"members", "member_id", "member_id", "M-"},
    {"shoppers", "shopper_id", "shopper_id", "SH-"},
    {"buyers", "buyer_id", "buyer_id", "B-"},
    {"patrons", "patron_id", "patron_id", "PT-"},
};

struct orders_choice {
    const char *table, *id;
};

static const struct orders_choice orders_tables[] = {
    {"orders", "order_id"},        {"orders", "id"},           {"purchases", "purchase_id"},
    {"sales_orders", "order_no"},  {"web_orders", "order_id"}, {"order_headers", "header_id"},
    {"shop_orders", "order_ref"},
};

static const char *const name_cols[] = {"name", "full_name", "display_name", "customer_name",
                                        "contact_name"};
static const char *const stamp_cols[] = {"placed_at", "ordered_at", "created_at"};
static const char *const count_names[] = {"order_count", "orders", "n_orders", "num_orders",
                                          "total_orders"};
static const char *const channels[] = {"web", "store", "phone", "marketplace", "app"};
static const char *const status_cols[] = {"status", "state", "payment_status"};
/* statuses[0] is the one that counts */
static const char *const statuses[] = {"paid", "pending", "cancelled", "refunded"};
#define N_UNPAID 3

/* The single mistakes, each a trap of its own. */
enum { M_WHERE = 1, M_STAR = 2, M_STATUS = 4, M_WINDOW = 8 };
static const struct {
    int bit;
    const char *name, *text;
} mistakes[] = {
    {M_WHERE, "where_filter", "Putting the status and date conditions in WHERE, which turns the "
                              "LEFT JOIN into an inner join and drops the customers without a "
                              "paid order in the window."},
    {M_STAR, "count_star", "COUNT(*) over the LEFT JOIN, which counts 1 for a customer without "
                           "a paid order in the window."},
    {M_STATUS, "status", "Dropping the status = 'paid' condition, so pending, cancelled and "
                         "refunded orders are counted."},
    {M_WINDOW, "window", "Comparing the timestamps with the bare dates as text (placed_at <= "
                         "'D2'), which drops the orders placed during D2."},
};
#define N_MISTAKES (sizeof mistakes / sizeof mistakes[0])

enum filter { F_NONE, F_YEAR, F_SINCE, F_BEFORE, F_RANGE };
static const char *const filter_names[] = {"none", "year", "since", "before", "range"};

static const char *const order_names[] = {"customer id ascending", "customer id descending",
                                          "count descending, then customer id ascending",
                                          "count ascending, then customer id ascending"};

/* The drawn question: everything the prompt, the gold query, the fill
 * function and the second derivation need. */
struct question {
    int side; /* the task's (row ids are drawn on it: vat_side_owns) */
    const char *ctable, *key, *fk, *code_prefix, *name_col;
    const char *otable, *oid, *date_col, *count_name, *status_col;
    bool coded;      /* customer ids are text codes "C-00042", else integers */
    bool timestamps; /* 'YYYY-MM-DD HH:MM:SS', else 'YYYY-MM-DD'             */
    bool with_name;  /* the name is the second output column                 */
    enum filter filter;
    enum vat_sqlgen_count_order order;
    int32_t span_lo, span_hi; /* days the fixtures' orders fall in     */
    int32_t lo, hi;           /* the window, inclusive days            */
    int year;                 /* F_YEAR                                */
    long rows_min, rows_max;
    char *schema;
    char *insert_customer, *insert_order;
};

static void question_free(void *p)
{
    struct question *q = p;
    if (!q)
        return;
    free(q->schema);
    free(q->insert_customer);
    free(q->insert_order);
    free(q);
}

static void draw_question(struct question *q, struct vat_rng *rng, double hardness)
{
    const struct customer_choice *cc =
        &customer_tables[vat_rng_below(rng, sizeof customer_tables / sizeof *customer_tables)];
    q->ctable = cc->table;
    q->key = cc->key;
    q->fk = cc->fk;
    q->code_prefix = cc->code_prefix;
    q->name_col = VAT_PICK(rng, name_cols);
    const struct orders_choice *oc =
        &orders_tables[vat_rng_below(rng, sizeof orders_tables / sizeof *orders_tables)];
    q->otable = oc->table;
    q->oid = oc->id;
    q->coded = vat_rng_chance(rng, 0.35);
    q->timestamps = true;
    q->date_col = VAT_PICK(rng, stamp_cols);
    q->status_col = VAT_PICK(rng, status_cols);
    q->count_name = VAT_PICK(rng, count_names);
    q->with_name = vat_rng_chance(rng, hardness);

    q->filter = F_RANGE;
    q->order = VAT_SQLGEN_ID_ASC;
    if (vat_rng_chance(rng, hardness))
        q->order = vat_rng_chance(rng, 0.7) ? VAT_SQLGEN_COUNT_DESC : VAT_SQLGEN_COUNT_ASC;
    else if (vat_rng_chance(rng, 0.4))
        q->order = VAT_SQLGEN_ID_DESC;

    /* Orders span three calendar years; a window sits inside them, so
     * every fixture has orders on both sides of it. */
    int y0 = (int)vat_rng_range(rng, 2018, 2023);
    q->span_lo = vat_date_from_civil(y0, 1, 1);
    q->span_hi = vat_date_from_civil(y0 + 2, 12, 31);
    q->lo = INT32_MIN;
    q->hi = INT32_MAX;
    switch (q->filter) {
    case F_YEAR:
        q->year = y0 + 1;
        q->lo = vat_date_from_civil(q->year, 1, 1);
        q->hi = vat_date_from_civil(q->year, 12, 31);
        break;
    case F_SINCE:
        q->lo = (int32_t)vat_rng_range(rng, q->span_lo + 200, q->span_hi - 200);
        break;
    case F_BEFORE:
        q->hi = (int32_t)vat_rng_range(rng, q->span_lo + 200, q->span_hi - 200) - 1;
        break;
    case F_RANGE:
        q->lo = (int32_t)vat_rng_range(rng, q->span_lo + 120, q->span_hi - 400);
        q->hi = q->lo + (int32_t)vat_rng_range(rng, 45, 240);
        break;
    default: break;
    }
}

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
    ((uint64_t)VAT_N_OF(customer_tables) * VAT_N_OF(orders_tables) * VAT_N_OF(stamp_cols) *   \
     VAT_N_OF(status_cols) * VAT_N_OF(count_names) * N_Y0 * N_FIRST_DAYS)

/* Replaces the drawn parts with the ones question number k decodes to.
 * The draws they replace stay in the stream, so every later draw of the
 * task (the fixture rows) comes from the same place in it; the window
 * keeps its drawn length. */
static void apply_question(struct question *q, uint64_t k)
{
    /* one digit per statement: the order they are read in is the number's */
    const struct customer_choice *cc =
        &customer_tables[vat_question_digit(&k, VAT_N_OF(customer_tables))];
    q->ctable = cc->table;
    q->key = cc->key;
    q->fk = cc->fk;
    q->code_prefix = cc->code_prefix;
    const struct orders_choice *oc =
        &orders_tables[vat_question_digit(&k, VAT_N_OF(orders_tables))];
    q->otable = oc->table;
    q->oid = oc->id;
    q->date_col = stamp_cols[vat_question_digit(&k, VAT_N_OF(stamp_cols))];
    q->status_col = status_cols[vat_question_digit(&k, VAT_N_OF(status_cols))];
    q->count_name = count_names[vat_question_digit(&k, VAT_N_OF(count_names))];
    int y0 = Y0_FIRST + (int)vat_question_digit(&k, N_Y0);
    int32_t len = q->hi - q->lo;
    q->span_lo = vat_date_from_civil(y0, 1, 1);
    q->span_hi = vat_date_from_civil(y0 + 2, 12, 31);
    q->lo = q->span_lo + 120 + (int32_t)k;
    q->hi = q->lo + len;
}

static void build_schema(struct question *q)
{
    struct vat_buf b = VAT_BUF_INIT, ins = VAT_BUF_INIT;
    const char *ktype = q->coded ? "TEXT" : "INTEGER";
    const char *fmt = q->timestamps ? "YYYY-MM-DD HH:MM:SS" : "YYYY-MM-DD";
    vat_buf_printf(&b, "CREATE TABLE %s (\n", q->ctable);
    vat_buf_printf(&b, "    %s %s PRIMARY KEY,\n", q->key, ktype);
    vat_buf_printf(&b, "    %s TEXT NOT NULL,\n", q->name_col);
    vat_buf_puts(&b, "    city TEXT,\n");
    vat_buf_puts(&b, "    signed_up_on TEXT NOT NULL  -- YYYY-MM-DD\n);\n");
    vat_buf_printf(&b, "CREATE TABLE %s (\n", q->otable);
    vat_buf_printf(&b, "    %s INTEGER PRIMARY KEY,\n", q->oid);
    vat_buf_printf(&b, "    %s %s,  -- %s.%s; NULL for a guest checkout\n", q->fk, ktype,
                   q->ctable, q->key);
    vat_buf_printf(&b, "    %s TEXT NOT NULL,  -- %s\n", q->date_col, fmt);
    vat_buf_printf(&b, "    %s TEXT NOT NULL,  -- 'paid', 'pending', 'cancelled' or 'refunded'\n",
                   q->status_col);
    vat_buf_puts(&b, "    channel TEXT NOT NULL,\n");
    vat_buf_puts(&b, "    amount REAL NOT NULL  -- US dollars\n)");
    q->schema = vat_buf_detach(&b);

    vat_buf_printf(&ins, "INSERT INTO %s (%s, %s, city, signed_up_on) VALUES (?1, ?2, ?3, ?4)",
                   q->ctable, q->key, q->name_col);
    q->insert_customer = vat_buf_detach(&ins);
    vat_buf_printf(&ins,
                   "INSERT INTO %s (%s, %s, %s, %s, channel, amount) "
                   "VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                   q->otable, q->oid, q->fk, q->date_col, q->status_col);
    q->insert_order = vat_buf_detach(&ins);
}

/* ---- the fixture rows ------------------------------------------------------- */

/* Fills a plan.  roles[i] says what customer i is: 0 active (orders in
 * the window), 1 without any order, 2 with orders outside the window
 * only.  target[i] (when not NULL) is the number of in-window orders an
 * active customer gets; else 1 plus a random share of the extra orders.
 * Each of the edge_rounds puts one order on every day next to a window
 * edge; n_null guest checkouts and n_unknown orders of unknown customers
 * come last. */
static void fill_plan(struct vat_sqlgen_plan *p, const struct question *q, struct vat_rng *rng,
                      const int *roles, const int *target, size_t extra, size_t n_null,
                      size_t n_unknown, int edge_rounds)
{
    size_t nactive = 0;
    int *active = vat_xcalloc(p->nc, sizeof *active);
    for (size_t i = 0; i < p->nc; i++) {
        if (roles[i] == 0)
            active[nactive++] = (int)i;
        else if (roles[i] == 2) {
            int k = (int)vat_rng_range(rng, 1, 3);
            for (int j = 0; j < k; j++)
                vat_sqlgen_add_order(p, rng, (int)i, vat_sqlgen_draw_day(p, rng, false));
        } else if (roles[i] == 3) {
            /* only unpaid orders in the window (a paid one outside) */
            int k = (int)vat_rng_range(rng, 1, 2);
            for (int j = 0; j < k; j++) {
                vat_sqlgen_add_order(p, rng, (int)i, vat_sqlgen_draw_day(p, rng, true));
                p->o[p->no - 1].status = 1 + (int)vat_rng_below(rng, N_UNPAID);
            }
            if (vat_rng_chance(rng, 0.5))
                vat_sqlgen_add_order(p, rng, (int)i, vat_sqlgen_draw_day(p, rng, false));
        }
    }
    for (size_t i = 0; i < nactive; i++) {
        int k = target ? target[active[i]] : 1;
        for (int j = 0; j < k; j++)
            vat_sqlgen_add_order(p, rng, active[i], vat_sqlgen_draw_day(p, rng, true));
    }
    /* Extra orders of active customers, in and out of the window; with
     * targets only out of it, so the targets hold (and none without a
     * window, where every order is in it). */
    if (target && q->filter == F_NONE)
        extra = 0;
    for (size_t j = 0; j < extra && nactive; j++) {
        int who = active[vat_rng_below(rng, (uint32_t)nactive)];
        bool in = target ? false : vat_rng_chance(rng, 0.7);
        vat_sqlgen_add_order(p, rng, who, vat_sqlgen_draw_day(p, rng, in));
    }
    int32_t days[4];
    size_t nb = nactive && !target ? vat_sqlgen_boundary_days(p, days) : 0;
    for (int round = 0; round < edge_rounds; round++) {
        for (size_t k = 0; k < nb; k++) {
            vat_sqlgen_add_order(p, rng, active[vat_rng_below(rng, (uint32_t)nactive)], days[k]);
            /* the last instant of a day punishes comparing a timestamp
             * with the bare date of the window's end */
            p->o[p->no - 1].secs = 86399 - (int32_t)vat_rng_below(rng, 600);
        }
    }
    /* unpaid orders of active customers inside the window */
    for (size_t k = 0; k < extra / 3 + 1 && nactive; k++) {
        /* one draw per statement (docs/determinism.md) */
        int who = active[vat_rng_below(rng, (uint32_t)nactive)];
        int32_t day = vat_sqlgen_draw_day(p, rng, true);
        vat_sqlgen_add_order(p, rng, who, day);
        p->o[p->no - 1].status = 1 + (int)vat_rng_below(rng, N_UNPAID);
    }
    for (size_t k = 0; k < n_null; k++)
        vat_sqlgen_add_order(p, rng, VAT_SQLGEN_CUST_NULL, vat_sqlgen_draw_day(p, rng, true));
    for (size_t k = 0; k < n_unknown; k++) {
        vat_sqlgen_add_order(p, rng, VAT_SQLGEN_CUST_UNKNOWN, vat_sqlgen_draw_day(p, rng, true));
        p->o[p->no - 1].unknown = vat_sqlgen_unknown_id(p, rng);
    }
    free(active);
}

/* Picks k distinct customer indexes from [0, nc) into roles (value r),
 * never overwriting a role already set. */
/* Main fixture: realistic; 2 to 4 customers without orders, customers
 * with orders outside the window only, orders on each side of every
 * window edge, now and then a guest checkout or an unknown customer. */
static void plan_main(const struct question *q, struct vat_rng *rng, struct vat_sqlgen_plan *p)
{
    long n = (long)vat_rng_range(rng, q->rows_min, q->rows_max);
    size_t nc = (size_t)(n / 3 < 8 ? 8 : n / 3 > 40 ? 40 : n / 3);
    vat_sqlgen_draw_customers(p, q->coded, q->code_prefix, q->side, rng, nc);
    int *roles = vat_xcalloc(nc, sizeof *roles);
    vat_sqlgen_mark_roles(roles, nc, rng, (size_t)vat_rng_range(rng, 2, 4), 1);
    vat_sqlgen_mark_roles(roles, nc, rng, (size_t)vat_rng_range(rng, 1, 2), 2);
    vat_sqlgen_mark_roles(roles, nc, rng, (size_t)vat_rng_range(rng, 1, 2), 3);
    size_t n_null = vat_rng_below(rng, 2);
    size_t n_unknown = vat_rng_below(rng, 2);
    fill_plan(p, q, rng, roles, NULL, 3, n_null, n_unknown, 1);
    /* then orders of active customers, in and out of the window, up to n */
    int *active = vat_xcalloc(nc, sizeof *active);
    size_t nactive = 0;
    for (size_t i = 0; i < nc; i++)
        if (roles[i] == 0)
            active[nactive++] = (int)i;
    while ((long)p->no < n && nactive) {
        int who = active[vat_rng_below(rng, (uint32_t)nactive)];
        bool in = vat_rng_chance(rng, 0.7);
        int32_t day = vat_sqlgen_draw_day(p, rng, in);
        vat_sqlgen_add_order(p, rng, who, day);
    }
    free(active);
    free(roles);
}

/* Variant "edges": the customers with the smallest and the largest id
 * have no orders, guest checkouts and orders of unknown customers, and
 * several orders on every window edge. */
static void plan_edges(const struct question *q, struct vat_rng *rng, struct vat_sqlgen_plan *p)
{
    size_t nc = (size_t)vat_rng_range(rng, 6, 10);
    vat_sqlgen_draw_customers(p, q->coded, q->code_prefix, q->side, rng, nc);
    int *roles = vat_xcalloc(nc, sizeof *roles);
    roles[0] = roles[nc - 1] = 1;
    vat_sqlgen_mark_roles(roles, nc, rng, 1, 2);
    vat_sqlgen_mark_roles(roles, nc, rng, 1, 3);
    fill_plan(p, q, rng, roles, NULL, (size_t)vat_rng_range(rng, 6, 14), 2, 2, 2);
    free(roles);
}

/* Variant "ties": counts drawn from a small set so several customers tie
 * at every count, three customers share a name, and some have orders
 * outside the window only. */
static void plan_ties(const struct question *q, struct vat_rng *rng, struct vat_sqlgen_plan *p)
{
    size_t nc = (size_t)vat_rng_range(rng, 7, 11);
    vat_sqlgen_draw_customers(p, q->coded, q->code_prefix, q->side, rng, nc);
    int *roles = vat_xcalloc(nc, sizeof *roles), *target = vat_xcalloc(nc, sizeof *target);
    vat_sqlgen_mark_roles(roles, nc, rng, 2, 1);
    if (q->filter != F_NONE)
        vat_sqlgen_mark_roles(roles, nc, rng, 1, 2);
    for (size_t i = 0; i < nc; i++)
        target[i] = (int)vat_rng_range(rng, 1, 2) + (i % 3 == 0);
    /* a third customer with the shared name */
    size_t a = vat_rng_below(rng, (uint32_t)nc),
           b = (a + 1 + vat_rng_below(rng, (uint32_t)nc - 1)) % nc;
    memcpy(p->c[b].name, p->c[a].name, sizeof p->c[b].name);
    fill_plan(p, q, rng, roles, target, (size_t)vat_rng_range(rng, 2, 6), 1, 0, 0);
    free(roles);
    free(target);
}

/* Variant "single": one customer has orders in the window, the others
 * none (or orders outside it only). */
static void plan_single(const struct question *q, struct vat_rng *rng, struct vat_sqlgen_plan *p)
{
    size_t nc = (size_t)vat_rng_range(rng, 3, 6);
    vat_sqlgen_draw_customers(p, q->coded, q->code_prefix, q->side, rng, nc);
    int *roles = vat_xcalloc(nc, sizeof *roles);
    size_t keep = vat_rng_below(rng, (uint32_t)nc);
    for (size_t i = 0; i < nc; i++)
        if (i != keep)
            roles[i] = q->filter != F_NONE && vat_rng_chance(rng, 0.5) ? 2 : 1;
    fill_plan(p, q, rng, roles, NULL, (size_t)vat_rng_range(rng, 1, 4), 0, 1, 0);
    free(roles);
}

static int insert_order(struct vat_sqlw *w, const struct question *q, const struct vat_sqlgen_plan *p,
                        const struct vat_sqlgen_ord *o, int64_t oid)
{
    char when[20], key[32];
    if (q->timestamps)
        vat_fmt_timestamp((int64_t)o->day * 86400 + o->secs, when);
    else
        vat_fmt_date(o->day, when);
    double amount = (double)o->cents / 100.0;
    const char *ch = channels[o->channel], *st = statuses[o->status];
    if (o->cust == VAT_SQLGEN_CUST_NULL)
        return vat_sqlw_insert(w, q->insert_order, "intttd", oid, when, st, ch, amount);
    int64_t num = o->cust == VAT_SQLGEN_CUST_UNKNOWN ? o->unknown : p->c[o->cust].num;
    if (q->coded) {
        vat_sqlgen_fmt_key(q->coded, q->code_prefix, num, key);
        return vat_sqlw_insert(w, q->insert_order, "ittttd", oid, key, when, st, ch, amount);
    }
    return vat_sqlw_insert(w, q->insert_order, "iitttd", oid, num, when, st, ch, amount);
}

static int fill(void *ctx, struct vat_rng *rng, int corner, struct vat_sqlw *w, struct vat_err *e)
{
    const struct question *q = ctx;
    struct vat_sqlgen_plan p = {
        .w = {q->span_lo, q->span_hi, q->lo, q->hi, q->filter == F_NONE},
        .n_channels = sizeof channels / sizeof *channels,
    };
    switch (corner == 0 ? 0 : (corner - 1) % 3 + 1) {
    case 0: plan_main(q, rng, &p); break;
    case 1: plan_edges(q, rng, &p); break;
    case 2: plan_ties(q, rng, &p); break;
    default: plan_single(q, rng, &p); break;
    }
    /* Customers are stored in sign-up-ish, not id, order, so only ORDER
     * BY gives the asked order; orders are numbered as they were placed. */
    size_t *perm = vat_xcalloc(p.nc, sizeof *perm);
    for (size_t i = 0; i < p.nc; i++)
        perm[i] = i;
    vat_rng_shuffle(rng, perm, p.nc, sizeof *perm);
    qsort(p.o, p.no, sizeof *p.o, vat_sqlgen_cmp_order);
    int64_t next_id = vat_rng_range(rng, 1000, 90000);
    int rc = 0;
    for (size_t i = 0; i < p.nc && rc == 0; i++)
        rc = vat_sqlgen_insert_customer(w, q->insert_customer, q->coded, q->code_prefix, &p.c[perm[i]]);
    for (size_t i = 0; i < p.no && rc == 0; i++) {
        next_id = vat_sqlgen_side_id(q->side, false, "", next_id);
        rc = insert_order(w, q, &p, &p.o[i], next_id++);
    }
    if (rc != 0)
        vat_err_set(e, "vat: cannot insert into '%s' or '%s'", q->ctable, q->otable);
    free(perm);
    free(p.c);
    free(p.o);
    return rc;
}

/* ---- the question as text ---------------------------------------------------- */

/* The reference query with the mistakes in `m` (M_* bits) made: 0 is gold. */
static char *build_query(const struct question *q, int m)
{
    char d1[11], d2[11];
    vat_fmt_date(q->lo, d1);
    vat_fmt_date(q->hi, d2);
    struct vat_buf cond = VAT_BUF_INIT, b = VAT_BUF_INIT;
    if (!(m & M_STATUS))
        vat_buf_printf(&cond, "o.%s = 'paid'", q->status_col);
    if (cond.len)
        vat_buf_puts(&cond, m & M_WHERE ? "\n  AND " : "\n    AND ");
    if (m & M_WINDOW)
        vat_buf_printf(&cond, "o.%s >= '%s' AND o.%s <= '%s'", q->date_col, d1, q->date_col, d2);
    else
        vat_buf_printf(&cond, "date(o.%s) >= '%s' AND date(o.%s) <= '%s'", q->date_col, d1,
                       q->date_col, d2);
    vat_buf_printf(&b, "SELECT c.%s", q->key);
    if (q->with_name)
        vat_buf_printf(&b, ", c.%s", q->name_col);
    if (m & M_STAR)
        vat_buf_printf(&b, ", COUNT(*) AS %s\n", q->count_name);
    else
        vat_buf_printf(&b, ", COUNT(o.%s) AS %s\n", q->oid, q->count_name);
    vat_buf_printf(&b, "FROM %s AS c\nLEFT JOIN %s AS o ON o.%s = c.%s", q->ctable, q->otable,
                   q->fk, q->key);
    if (m & M_WHERE)
        vat_buf_printf(&b, "\nWHERE %s", cond.data);
    else
        vat_buf_printf(&b, "\n    AND %s", cond.data);
    vat_buf_release(&cond);
    vat_buf_printf(&b, "\nGROUP BY c.%s", q->key);
    if (q->with_name)
        vat_buf_printf(&b, ", c.%s", q->name_col);
    vat_buf_puts(&b, "\nORDER BY ");
    switch (q->order) {
    case VAT_SQLGEN_ID_ASC: vat_buf_printf(&b, "c.%s ASC", q->key); break;
    case VAT_SQLGEN_ID_DESC: vat_buf_printf(&b, "c.%s DESC", q->key); break;
    case VAT_SQLGEN_COUNT_DESC:
        vat_buf_printf(&b, "%s DESC, c.%s ASC", q->count_name, q->key);
        break;
    default: vat_buf_printf(&b, "%s ASC, c.%s ASC", q->count_name, q->key); break;
    }
    return vat_buf_detach(&b);
}

static const char *date_format(const struct question *q)
{
    (void)q;
    return "YYYY-MM-DD HH:MM:SS";
}

/* "3 March 2024", the way people write a day. */
static void human_date(int32_t day, char out[32])
{
    static const char *const months[] = {"January", "February", "March",     "April",
                                         "May",     "June",     "July",      "August",
                                         "September", "October", "November", "December"};
    char iso[11];
    vat_fmt_date(day, iso);
    snprintf(out, 32, "%d %s %d", atoi(iso + 8), months[(atoi(iso + 5) + 11) % 12], atoi(iso));
}

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

static int build_prompt(struct vat_task *t, const struct question *q, struct vat_err *e)
{
    struct vat_buf b = VAT_BUF_INIT, data = VAT_BUF_INIT;
    const char *tabs[2] = {q->ctable, q->otable};
    bool cut = false;
    size_t cap = vat_task_inline_cap(t);
    if (vat_sqlgen_render(t->root, t->fixture[0].path, tabs, 2, cap, &data, &cut, e) != 0) {
        vat_buf_release(&data);
        return -1;
    }
    char from[11], to[11], from_h[32], to_h[32];
    vat_fmt_date(q->lo, from);
    vat_fmt_date(q->hi, to);
    human_date(q->lo, from_h);
    human_date(q->hi, to_h);
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
    vat_prompt_open(&b, t, kv);
    char *what = vat_xasprintf("[[a shop's customers, `%s`, and their orders, `%s`|two tables "
                               "of a shop: its customers, `%s`, and their orders, `%s`|a "
                               "shop's customer table `%s` and its order table `%s`]]",
                               q->ctable, q->otable, q->ctable, q->otable, q->ctable,
                               q->otable);
    vat_sqlgen_prompt_intro(&b, t, what, cut ? "the leading rows of each table" : "all the rows");
    free(what);
    vat_buf_putn(&b, data.data, data.len);
    if (cut)
        vat_buf_puts(&b, "\nOnly the leading rows fit here; the full tables are in the file.\n");
    vat_buf_release(&data);
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
    struct vat_sqlgen_count_query cq = {.ctable = q->ctable, .key = q->key,
                                        .name_col = q->name_col, .otable = q->otable,
                                        .fk = q->fk, .date_col = q->date_col,
                                        .order = q->order, .with_name = q->with_name};
    vat_sqlgen_prompt_count_columns(&b, t, &cq, q->count_name);
    vat_buf_puts(&b, "\n");
    vat_sqlgen_prompt_close(&b, t);
    t->prompt = vat_buf_detach(&b);
    /* The schema in the prompt is all an SQL answer needs; the variant
     * databases are hidden by design (docs/tables.md, self_contained). */
    t->self_contained = true;
    return 0;
}

static json_t *build_params(const struct question *q)
{
    char d1[11], d2[11];
    json_t *p = json_object();
    json_object_set_new(p, "customers_table", json_string(q->ctable));
    json_object_set_new(p, "customer_key", json_string(q->key));
    json_object_set_new(p, "customer_key_type", json_string(q->coded ? "text" : "integer"));
    json_object_set_new(p, "name_column", json_string(q->name_col));
    json_object_set_new(p, "orders_table", json_string(q->otable));
    json_object_set_new(p, "order_id_column", json_string(q->oid));
    json_object_set_new(p, "order_customer_column", json_string(q->fk));
    json_object_set_new(p, "date_column", json_string(q->date_col));
    json_object_set_new(p, "date_format", json_string(date_format(q)));
    json_object_set_new(p, "status_column", json_string(q->status_col));
    json_t *w = json_object();
    json_object_set_new(w, "kind", json_string(filter_names[q->filter]));
    switch (q->filter) {
    case F_YEAR: json_object_set_new(w, "year", json_integer(q->year)); break;
    case F_SINCE: json_object_set_new(w, "from", json_string(vat_fmt_date(q->lo, d1))); break;
    case F_BEFORE:
        json_object_set_new(w, "before", json_string(vat_fmt_date(q->hi + 1, d1)));
        break;
    case F_RANGE:
        json_object_set_new(w, "from", json_string(vat_fmt_date(q->lo, d1)));
        json_object_set_new(w, "through", json_string(vat_fmt_date(q->hi, d2)));
        break;
    default: break;
    }
    json_object_set_new(p, "window", w);
    json_object_set_new(p, "order", json_string(order_names[q->order]));
    json_t *out = json_array();
    json_array_append_new(out, json_string(q->key));
    if (q->with_name)
        json_array_append_new(out, json_string(q->name_col));
    json_array_append_new(out, json_string(q->count_name));
    json_object_set_new(p, "output_columns", out);
    return p;
}

/* ---- the template callbacks ------------------------------------------------- */

static int generate(struct vat_task *t, struct vat_rng *rng, struct vat_err *e)
{
    struct question *q = vat_xcalloc(1, sizeof *q);
    t->priv = q;
    t->priv_free = question_free;
    q->side = t->side;
    q->rows_min = vat_task_int(t, "rows_min");
    q->rows_max = vat_task_int(t, "rows_max");
    if (q->rows_max < q->rows_min)
        q->rows_max = q->rows_min;
    draw_question(q, rng, vat_task_real(t, "hardness"));
    apply_question(q, vat_task_question(t, N_QUESTIONS));
    build_schema(q);

    const char *tabs[2] = {q->ctable, q->otable};
    struct vat_sqlgen_set set = {
        .schema_sql = q->schema,
        .tables = tabs,
        .ntables = 2,
        .nvariants = (int)vat_task_int(t, "variants"),
        .fill = fill,
        .ctx = q,
    };
    if (vat_sqlgen_write_set(t, rng, &set, e) != 0)
        return -1;
    t->spec = vat_sqlgen_spec(t, tabs, 2, true, REL_TOL, ABS_TOL);
    t->params = build_params(q);
    /* Difficulty: the four armed traps count 2, then the ordering by the
     * count, the name column and the natural style one each. */
    bool by_count = q->order == VAT_SQLGEN_COUNT_DESC || q->order == VAT_SQLGEN_COUNT_ASC;
    int d = 2 + by_count + q->with_name + vat_prompt_natural(t);
    t->difficulty = d > 5 ? 5 : d;
    return build_prompt(t, q, e);
}

static int reference(struct vat_task *t, struct vat_err *e)
{
    const struct question *q = t->priv;
    char *gold = build_query(q, 0);
    return vat_sqlgen_accept_gold(t, gold, true, REL_TOL, ABS_TOL, e);
}

/* ---- the second derivation: plain row reads counted in C ------------------- */

static json_t *derive_rows(const void *question, const char *root, const char *rel,
                           struct vat_err *e)
{
    const struct question *q = question;
    const struct vat_sqlgen_count_query c = {
        .ctable = q->ctable, .key = q->key, .name_col = q->name_col,
        .otable = q->otable, .fk = q->fk, .date_col = q->date_col, .status_col = q->status_col,
        .lo = q->lo, .hi = q->hi, .order = q->order, .with_name = q->with_name,
    };
    return vat_sqlgen_count_orders(&c, root, rel, e);
}

static int confirm(const struct vat_task *t, struct vat_err *e)
{
    return vat_sqlgen_confirm(t, derive_rows, t->priv, REL_TOL, ABS_TOL, e);
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
        if (vat_sqlgen_set_trap(t, build_query(t->priv, mistakes[i].bit), REL_TOL, ABS_TOL, e) !=
            0)
            return -1;
        struct vat_trap *tp = &t->traps[t->n_traps++];
        tp->name = mistakes[i].name;
        tp->text = mistakes[i].text;
        tp->answer = t->trap;
        t->trap = NULL;
        all |= mistakes[i].bit;
    }
    return vat_sqlgen_set_trap(t, build_query(t->priv, all), REL_TOL, ABS_TOL, e);
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
    .params = params,
    .default_count = 12,
    .generate = generate,
    .reference = reference,
    .confirm = confirm,
    .trap_answer = trap_answer,
    .check = vat_check_task,
    .giveaways = giveaways,
    .conventions = conventions,
    .defects = defects,
    .answer_columns = answer_columns,
    .difficulty_doc = "2 (four armed traps) + 1 when ordered by the count + 1 with the name "
                      "column + 1 in the natural style, at most 5.",
};
