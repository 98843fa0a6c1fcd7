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
 * sharing a name, and a fixture where a single customer has orders.
 * The trap is COUNT(*) over the LEFT JOIN, which counts 1 for a customer
 * with no orders.  Exports vat_tmpl_sql_order_counts. */
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
    {"shop_orders", "order_ref"},  {"online_orders", "order_id"}, {"order_records", "record_id"},
    {"purchase_orders", "po_number"},
};

static const char *const name_cols[] = {"name", "full_name", "display_name", "customer_name",
                                        "contact_name"};
static const char *const date_cols[] = {"placed_on", "ordered_on", "order_date", "created_on"};
static const char *const stamp_cols[] = {"placed_at", "ordered_at", "created_at"};
static const char *const count_names[] = {"order_count", "orders",         "n_orders",
                                          "num_orders",  "total_orders",   "orders_placed",
                                          "n_purchases", "purchase_count"};
/* The gold query's table aliases (customers, orders). */
static const char *const customer_aliases[] = {"c", "cu", "cust", "a"};
static const char *const order_aliases[] = {"o", "od", "ord", "b"};
static const char *const channels[] = {"web", "store", "phone", "marketplace", "app"};

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
    const char *otable, *oid, *date_col, *count_name;
    const char *ca, *oa; /* the gold query's aliases of the two tables */
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
    q->timestamps = vat_rng_chance(rng, hardness * 0.8);
    q->date_col = q->timestamps ? VAT_PICK(rng, stamp_cols) : VAT_PICK(rng, date_cols);
    q->count_name = VAT_PICK(rng, count_names);
    q->with_name = vat_rng_chance(rng, hardness);

    q->filter = F_NONE;
    if (vat_rng_chance(rng, 0.3 + hardness * 0.6))
        q->filter = (enum filter)(1 + vat_rng_below(rng, 4));
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

/* The question space: the names the gold query spells whatever the
 * drawn features (customer table and key, orders table and id, the count
 * alias, the two table aliases), as the digits of one mixed-radix number;
 * every list's entries are distinct, so two numbers name two different
 * gold queries.  11,520 questions. */
#define N_QUESTIONS                                                                           \
    (VAT_N_OF(customer_tables) * VAT_N_OF(orders_tables) * VAT_N_OF(count_names) *            \
     VAT_N_OF(customer_aliases) * VAT_N_OF(order_aliases))

/* Replaces the drawn names with the ones question number k decodes to.
 * The draws they replace stay in the stream, so every later draw of the
 * task (the window, the fixture rows) is what it was. */
static void apply_question(struct question *q, uint64_t k)
{
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
    q->count_name = count_names[vat_question_digit(&k, VAT_N_OF(count_names))];
    q->ca = customer_aliases[vat_question_digit(&k, VAT_N_OF(customer_aliases))];
    q->oa = order_aliases[vat_question_digit(&k, VAT_N_OF(order_aliases))];
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
    vat_buf_puts(&b, "    channel TEXT NOT NULL,\n");
    vat_buf_puts(&b, "    amount REAL NOT NULL  -- US dollars\n)");
    q->schema = vat_buf_detach(&b);

    vat_buf_printf(&ins, "INSERT INTO %s (%s, %s, city, signed_up_on) VALUES (?1, ?2, ?3, ?4)",
                   q->ctable, q->key, q->name_col);
    q->insert_customer = vat_buf_detach(&ins);
    vat_buf_printf(&ins, "INSERT INTO %s (%s, %s, %s, channel, amount) VALUES (?1, ?2, ?3, ?4, ?5)",
                   q->otable, q->oid, q->fk, q->date_col);
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
    if (q->filter != F_NONE)
        vat_sqlgen_mark_roles(roles, nc, rng, (size_t)vat_rng_range(rng, 1, 2), 2);
    /* one draw per statement (docs/determinism.md), the unknown count
     * first: the order the corpus was drawn in, so its bytes stay */
    size_t n_unknown = vat_rng_below(rng, 2);
    size_t n_null = vat_rng_below(rng, 2);
    fill_plan(p, q, rng, roles, NULL, 0, n_null, n_unknown, 1);
    /* then orders of active customers, in and out of the window, up to n */
    int *active = vat_xcalloc(nc, sizeof *active);
    size_t nactive = 0;
    for (size_t i = 0; i < nc; i++)
        if (roles[i] == 0)
            active[nactive++] = (int)i;
    while ((long)p->no < n && nactive) {
        /* the day, then the customer: one draw per statement */
        int32_t day = vat_sqlgen_draw_day(p, rng, vat_rng_chance(rng, 0.7));
        int cust = active[vat_rng_below(rng, (uint32_t)nactive)];
        vat_sqlgen_add_order(p, rng, cust, day);
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
    if (q->filter != F_NONE)
        vat_sqlgen_mark_roles(roles, nc, rng, 1, 2);
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
    const char *ch = channels[o->channel];
    if (o->cust == VAT_SQLGEN_CUST_NULL)
        return vat_sqlw_insert(w, q->insert_order, "inttd", oid, when, ch, amount);
    int64_t num = o->cust == VAT_SQLGEN_CUST_UNKNOWN ? o->unknown : p->c[o->cust].num;
    if (q->coded) {
        vat_sqlgen_fmt_key(q->coded, q->code_prefix, num, key);
        return vat_sqlw_insert(w, q->insert_order, "itttd", oid, key, when, ch, amount);
    }
    return vat_sqlw_insert(w, q->insert_order, "iittd", oid, num, when, ch, amount);
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

/* The window condition on the order date, or nothing for F_NONE. */
static void put_window(struct vat_buf *b, const struct question *q)
{
    char d1[11], d2[11];
    /* Timestamps are compared by their day, so a bound is one day. */
    char *col = q->timestamps ? vat_xasprintf("date(%s.%s)", q->oa, q->date_col)
                              : vat_xasprintf("%s.%s", q->oa, q->date_col);
    switch (q->filter) {
    case F_YEAR:
        vat_buf_printf(b, "strftime('%%Y', %s.%s) = '%04d'", q->oa, q->date_col, q->year);
        break;
    case F_SINCE: vat_buf_printf(b, "%s >= '%s'", col, vat_fmt_date(q->lo, d1)); break;
    case F_BEFORE: vat_buf_printf(b, "%s < '%s'", col, vat_fmt_date(q->hi + 1, d1)); break;
    case F_RANGE:
        vat_buf_printf(b, "%s >= '%s' AND %s <= '%s'", col, vat_fmt_date(q->lo, d1), col,
                       vat_fmt_date(q->hi, d2));
        break;
    default: break;
    }
    free(col);
}

/* The reference query; with count_star it is the trap. */
static char *build_query(const struct question *q, bool count_star)
{
    struct vat_buf b = VAT_BUF_INIT;
    const char *c = q->ca, *o = q->oa;
    vat_buf_printf(&b, "SELECT %s.%s", c, q->key);
    if (q->with_name)
        vat_buf_printf(&b, ", %s.%s", c, q->name_col);
    if (count_star)
        vat_buf_printf(&b, ", COUNT(*) AS %s\n", q->count_name);
    else
        vat_buf_printf(&b, ", COUNT(%s.%s) AS %s\n", o, q->oid, q->count_name);
    vat_buf_printf(&b, "FROM %s AS %s\nLEFT JOIN %s AS %s ON %s.%s = %s.%s", q->ctable, c,
                   q->otable, o, o, q->fk, c, q->key);
    if (q->filter != F_NONE) {
        vat_buf_puts(&b, "\n    AND ");
        put_window(&b, q);
    }
    vat_buf_printf(&b, "\nGROUP BY %s.%s", c, q->key);
    if (q->with_name)
        vat_buf_printf(&b, ", %s.%s", c, q->name_col);
    vat_buf_puts(&b, "\nORDER BY ");
    switch (q->order) {
    case VAT_SQLGEN_ID_ASC: vat_buf_printf(&b, "%s.%s ASC", c, q->key); break;
    case VAT_SQLGEN_ID_DESC: vat_buf_printf(&b, "%s.%s DESC", c, q->key); break;
    case VAT_SQLGEN_COUNT_DESC:
        vat_buf_printf(&b, "%s DESC, %s.%s ASC", q->count_name, c, q->key);
        break;
    default: vat_buf_printf(&b, "%s ASC, %s.%s ASC", q->count_name, c, q->key); break;
    }
    return vat_buf_detach(&b);
}

static const char *date_format(const struct question *q)
{
    return q->timestamps ? "YYYY-MM-DD HH:MM:SS" : "YYYY-MM-DD";
}

/* "placed in 2023", "placed on or after 2023-04-01", ... */
static void put_window_text(struct vat_buf *b, const struct question *q)
{
    char d1[11], d2[11];
    switch (q->filter) {
    case F_YEAR: vat_buf_printf(b, "placed in the calendar year %04d", q->year); break;
    case F_SINCE: vat_buf_printf(b, "placed on or after %s", vat_fmt_date(q->lo, d1)); break;
    case F_BEFORE: vat_buf_printf(b, "placed before %s", vat_fmt_date(q->hi + 1, d1)); break;
    case F_RANGE:
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
static void natural_question(struct vat_buf *b, struct vat_task *t, const struct question *q)
{
    char h1[32], h2[32], win[96] = "";
    switch (q->filter) {
    case F_YEAR: snprintf(win, sizeof win, " in %04d", q->year); break;
    case F_SINCE:
        vat_prompt_human_date(q->lo, h1);
        snprintf(win, sizeof win, " since %s", h1);
        break;
    case F_BEFORE:
        vat_prompt_human_date(q->hi + 1, h1);
        snprintf(win, sizeof win, " before %s", h1);
        break;
    case F_RANGE:
        vat_prompt_human_date(q->lo, h1);
        vat_prompt_human_date(q->hi, h2);
        snprintf(win, sizeof win, " from %s to %s", h1, h2);
        break;
    default: break;
    }
    const char *kv[] = {
        "ctable", q->ctable, "otable", q->otable, "key", q->key, "fk", q->fk,
        "date", q->date_col, "fmt", date_format(q), "win", win,
        "keykind", q->coded ? "a text code, ordered as text" : "an integer",
        "every", vat_prompt_state(t, "customers_table"),
        NULL,
    };
    vat_buf_puts(b, "\n");
    VAT_PROMPT_PUT(b, t, 'd', d_natural, kv);
    vat_buf_puts(b, "\n\n");
    VAT_PROMPT_PUT(b, t, 'q', q_natural, kv);
    if (q->filter == F_RANGE) {
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

static int build_prompt(struct vat_task *t, const struct question *q, struct vat_err *e)
{
    struct vat_buf b = VAT_BUF_INIT, data = VAT_BUF_INIT;
    const char *tabs[2] = {q->ctable, q->otable};
    bool cut = false;
    if (vat_sqlgen_render(t->root, t->fixture[0].path, tabs, 2, vat_task_inline_cap(t), &data, &cut,
                          e) != 0) {
        vat_buf_release(&data);
        return -1;
    }
    /* The schema is always shown: it is all a query needs. */
    t->self_contained = true;
    const char *okv[] = {"topic", "[[our customer list|the shop's order history|customer "
                                  "activity]]", NULL};
    vat_prompt_open(&b, t, okv);
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

    if (vat_prompt_natural(t)) {
        natural_question(&b, t, q);
        goto columns_out;
    }
    vat_buf_puts(&b, "\n");
    VAT_PROMPT_PUT(&b, t, 'd', d_explicit, NULL);
    vat_buf_puts(&b, "\n");
    const char *kv[] = {"ctable", q->ctable, "key", q->key, "otable", q->otable, "fk", q->fk,
                        "name", q->name_col, "date", q->date_col, "fmt", date_format(q),
                        "keykind", q->coded ? "a text code, ordered as text" : "an integer",
                        "day", q->timestamps ? "; an order belongs to the calendar day of its "
                                               "timestamp"
                                             : "",
                        NULL};
    vat_prompt_say(&b, t, 'x',
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
    vat_buf_puts(&b, "\n");
    struct vat_buf window = VAT_BUF_INIT;
    put_window_text(&window, q);
    const char *qkv[] = {"t", q->ctable, "window", window.data, NULL};
    VAT_PROMPT_PUT(&b, t, 'q', q_explicit, qkv);
    vat_buf_release(&window);
    vat_buf_printf(&b, " A customer with no %sorder is listed with 0. ",
                   q->filter == F_NONE ? "" : "such ");
columns_out:;
    struct vat_sqlgen_count_query cq = {.ctable = q->ctable, .key = q->key,
                                        .name_col = q->name_col, .otable = q->otable,
                                        .fk = q->fk, .date_col = q->date_col,
                                        .order = q->order, .with_name = q->with_name};
    vat_sqlgen_prompt_count_columns(&b, t, &cq, q->count_name);
    vat_buf_puts(&b, "\n");
    vat_sqlgen_prompt_close(&b, t);
    t->prompt = vat_buf_detach(&b);
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
    int d = 1 + (q->filter != F_NONE) + (q->timestamps && q->filter != F_NONE) +
            (q->order == VAT_SQLGEN_COUNT_DESC || q->order == VAT_SQLGEN_COUNT_ASC) + q->with_name;
    t->difficulty = d > 5 ? 5 : d;
    return build_prompt(t, q, e);
}

static int reference(struct vat_task *t, struct vat_err *e)
{
    const struct question *q = t->priv;
    char *gold = build_query(q, false);
    return vat_sqlgen_accept_gold(t, gold, true, REL_TOL, ABS_TOL, e);
}

/* ---- the second derivation: plain row reads counted in C ------------------- */

static json_t *derive_rows(const void *question, const char *root, const char *rel,
                           struct vat_err *e)
{
    const struct question *q = question;
    const struct vat_sqlgen_count_query c = {
        .ctable = q->ctable, .key = q->key, .name_col = q->name_col,
        .otable = q->otable, .fk = q->fk, .date_col = q->date_col, .status_col = NULL,
        .lo = q->lo, .hi = q->hi, .order = q->order, .with_name = q->with_name,
    };
    return vat_sqlgen_count_orders(&c, root, rel, e);
}

static int confirm(const struct vat_task *t, struct vat_err *e)
{
    return vat_sqlgen_confirm(t, derive_rows, t->priv, REL_TOL, ABS_TOL, e);
}

static int trap_answer(struct vat_task *t, struct vat_err *e)
{
    /* Every fixture plants customers without orders, which
     * vat_sqlgen_set_trap proves change the main fixture's result. */
    return vat_sqlgen_set_trap(t, build_query(t->priv, true), REL_TOL, ABS_TOL, e);
}

const struct vat_template vat_tmpl_sql_order_counts = {
    .version = VAT_TEMPLATE_V1,
    .name = "sql_order_counts",
    .family = "sql",
    .answer_kind = "sql",
    .trap = "COUNT(*) over the LEFT JOIN, which counts 1 for a customer with no orders.",
    .summary = "One SQLite SELECT listing every customer with their number of orders (zero "
               "included), optionally within a date window, in a stated order.",
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
    .difficulty_doc = "1 + 1 with a date window + 1 for a window over timestamps + 1 when "
                      "ordered by the count + 1 with the name column, at most 5 (the natural "
                      "style does not add: its window words carry the same meaning).",
};
