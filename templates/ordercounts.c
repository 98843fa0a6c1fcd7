/* ordercounts.c — the machinery of the order-count family
 * (ordercounts.h): the drawn question, the schema, the fixture plans,
 * the gold query and its mistakes, the params row, the prompt's data
 * section and result columns, reference and confirm.  Where the two
 * templates once drew in different orders, both orders are kept
 * (kind->paid says which), so every task they build is what it was. */
#include "ordercounts.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prompt.h"
#include "template.h"
#include "values.h"

#define REL_TOL 0.0
#define ABS_TOL 0.0

const struct vat_param vat_oc_params[] = {
    {"rows_min", VAT_PARAM_INT, 30, NULL, 12, 2000, "fewest orders in the main fixture",
     VAT_PARAM_ROWS},
    {"rows_max", VAT_PARAM_INT, 90, NULL, 12, 5000, "most orders in the main fixture",
     VAT_PARAM_ROWS},
    {"variants", VAT_PARAM_INT, 3, NULL, 2, 6, "held-out variant fixtures per task", 0},
    {"hardness", VAT_PARAM_REAL, 0.5, NULL, 0, 1,
     "chance of each harder feature: a date window, timestamps, ordering by the count, the "
     "name column", 0},
    {0},
};

const struct vat_oc_customer_choice vat_oc_customer_tables[9] = {
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

const struct vat_oc_orders_choice vat_oc_orders_tables[10] = {
    {"orders", "order_id"},        {"orders", "id"},           {"purchases", "purchase_id"},
    {"sales_orders", "order_no"},  {"web_orders", "order_id"}, {"order_headers", "header_id"},
    {"shop_orders", "order_ref"},  {"online_orders", "order_id"}, {"order_records", "record_id"},
    {"purchase_orders", "po_number"},
};

const char *const vat_oc_stamp_cols[3] = {"placed_at", "ordered_at", "created_at"};
const char *const vat_oc_count_names[8] = {"order_count", "orders",         "n_orders",
                                           "num_orders",  "total_orders",   "orders_placed",
                                           "n_purchases", "purchase_count"};
const char *const vat_oc_status_cols[3] = {"status", "state", "payment_status"};

static const char *const name_cols[] = {"name", "full_name", "display_name", "customer_name",
                                        "contact_name"};
static const char *const date_cols[] = {"placed_on", "ordered_on", "order_date", "created_on"};
static const char *const channels[] = {"web", "store", "phone", "marketplace", "app"};
/* statuses[0] is the one that counts */
static const char *const statuses[] = {"paid", "pending", "cancelled", "refunded"};
#define N_UNPAID 3

static const char *const filter_names[] = {"none", "year", "since", "before", "range"};
static const char *const order_names[] = {"customer id ascending", "customer id descending",
                                          "count descending, then customer id ascending",
                                          "count ascending, then customer id ascending"};

/* ---- the question ---------------------------------------------------------- */

static void question_free(void *p)
{
    struct vat_oc_question *q = p;
    if (!q)
        return;
    free(q->schema);
    free(q->insert_customer);
    free(q->insert_order);
    free(q);
}

/* The window: orders span three calendar years and a window sits inside
 * them, so every fixture has orders on both sides of it. */
static void draw_window(struct vat_oc_question *q, struct vat_rng *rng)
{
    int y0 = (int)vat_rng_range(rng, 2018, 2023);
    q->span_lo = vat_date_from_civil(y0, 1, 1);
    q->span_hi = vat_date_from_civil(y0 + 2, 12, 31);
    q->lo = INT32_MIN;
    q->hi = INT32_MAX;
    switch (q->filter) {
    case VAT_OC_YEAR:
        q->year = y0 + 1;
        q->lo = vat_date_from_civil(q->year, 1, 1);
        q->hi = vat_date_from_civil(q->year, 12, 31);
        break;
    case VAT_OC_SINCE:
        q->lo = (int32_t)vat_rng_range(rng, q->span_lo + 200, q->span_hi - 200);
        break;
    case VAT_OC_BEFORE:
        q->hi = (int32_t)vat_rng_range(rng, q->span_lo + 200, q->span_hi - 200) - 1;
        break;
    case VAT_OC_RANGE:
        q->lo = (int32_t)vat_rng_range(rng, q->span_lo + 120, q->span_hi - 400);
        q->hi = q->lo + (int32_t)vat_rng_range(rng, 45, 240);
        break;
    default: break;
    }
}

static void draw_question(struct vat_oc_question *q, struct vat_rng *rng, double hardness)
{
    const struct vat_oc_kind *k = q->kind;
    const struct vat_oc_customer_choice *cc =
        &vat_oc_customer_tables[vat_rng_below(rng, VAT_N_OF(vat_oc_customer_tables))];
    q->ctable = cc->table;
    q->key = cc->key;
    q->fk = cc->fk;
    q->code_prefix = cc->code_prefix;
    q->name_col = VAT_PICK(rng, name_cols);
    const struct vat_oc_orders_choice *oc =
        &vat_oc_orders_tables[vat_rng_below(rng, (uint32_t)k->n_orders_tables)];
    q->otable = oc->table;
    q->oid = oc->id;
    q->coded = vat_rng_chance(rng, 0.35);
    q->timestamps = k->paid || vat_rng_chance(rng, hardness * 0.8);
    q->date_col = q->timestamps ? VAT_PICK(rng, vat_oc_stamp_cols) : VAT_PICK(rng, date_cols);
    if (k->paid)
        q->status_col = VAT_PICK(rng, vat_oc_status_cols);
    q->count_name = vat_rng_pick(rng, vat_oc_count_names, k->n_count_names);
    q->with_name = vat_rng_chance(rng, hardness);

    q->filter = k->paid ? VAT_OC_RANGE : VAT_OC_NONE;
    if (!k->paid && vat_rng_chance(rng, 0.3 + hardness * 0.6))
        q->filter = (enum vat_oc_filter)(1 + vat_rng_below(rng, 4));
    q->order = VAT_SQLGEN_ID_ASC;
    if (vat_rng_chance(rng, hardness))
        q->order = vat_rng_chance(rng, 0.7) ? VAT_SQLGEN_COUNT_DESC : VAT_SQLGEN_COUNT_ASC;
    else if (vat_rng_chance(rng, 0.4))
        q->order = VAT_SQLGEN_ID_DESC;
    draw_window(q, rng);
    /* the gold query's aliases, unless the question number names others */
    q->ca = "c";
    q->oa = "o";
}

struct vat_oc_question *vat_oc_question_new(struct vat_task *t, struct vat_rng *rng,
                                            const struct vat_oc_kind *kind)
{
    struct vat_oc_question *q = vat_xcalloc(1, sizeof *q);
    t->priv = q;
    t->priv_free = question_free;
    q->kind = kind;
    q->side = t->side;
    q->rows_min = vat_task_int(t, "rows_min");
    q->rows_max = vat_task_int(t, "rows_max");
    if (q->rows_max < q->rows_min)
        q->rows_max = q->rows_min;
    draw_question(q, rng, vat_task_real(t, "hardness"));
    return q;
}

const char *vat_oc_date_format(const struct vat_oc_question *q)
{
    return q->timestamps ? "YYYY-MM-DD HH:MM:SS" : "YYYY-MM-DD";
}

static void build_schema(struct vat_oc_question *q)
{
    struct vat_buf b = VAT_BUF_INIT, ins = VAT_BUF_INIT;
    const char *ktype = q->coded ? "TEXT" : "INTEGER";
    vat_buf_printf(&b, "CREATE TABLE %s (\n", q->ctable);
    vat_buf_printf(&b, "    %s %s PRIMARY KEY,\n", q->key, ktype);
    vat_buf_printf(&b, "    %s TEXT NOT NULL,\n", q->name_col);
    vat_buf_puts(&b, "    city TEXT,\n");
    vat_buf_puts(&b, "    signed_up_on TEXT NOT NULL  -- YYYY-MM-DD\n);\n");
    vat_buf_printf(&b, "CREATE TABLE %s (\n", q->otable);
    vat_buf_printf(&b, "    %s INTEGER PRIMARY KEY,\n", q->oid);
    vat_buf_printf(&b, "    %s %s,  -- %s.%s; NULL for a guest checkout\n", q->fk, ktype,
                   q->ctable, q->key);
    vat_buf_printf(&b, "    %s TEXT NOT NULL,  -- %s\n", q->date_col, vat_oc_date_format(q));
    if (q->status_col)
        vat_buf_printf(&b,
                       "    %s TEXT NOT NULL,  -- 'paid', 'pending', 'cancelled' or 'refunded'\n",
                       q->status_col);
    vat_buf_puts(&b, "    channel TEXT NOT NULL,\n");
    vat_buf_puts(&b, "    amount REAL NOT NULL  -- US dollars\n)");
    q->schema = vat_buf_detach(&b);

    vat_buf_printf(&ins, "INSERT INTO %s (%s, %s, city, signed_up_on) VALUES (?1, ?2, ?3, ?4)",
                   q->ctable, q->key, q->name_col);
    q->insert_customer = vat_buf_detach(&ins);
    if (q->status_col)
        vat_buf_printf(&ins,
                       "INSERT INTO %s (%s, %s, %s, %s, channel, amount) "
                       "VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                       q->otable, q->oid, q->fk, q->date_col, q->status_col);
    else
        vat_buf_printf(&ins,
                       "INSERT INTO %s (%s, %s, %s, channel, amount) VALUES (?1, ?2, ?3, ?4, ?5)",
                       q->otable, q->oid, q->fk, q->date_col);
    q->insert_order = vat_buf_detach(&ins);
}

/* ---- the fixture rows ------------------------------------------------------- */

/* Customer roles in a plan. */
enum { R_ACTIVE, R_NONE, R_OUTSIDE, R_UNPAID };

/* Adds the orders of the customers whose role is not active: R_OUTSIDE
 * orders outside the window only, R_UNPAID unpaid orders in it (and now
 * and then a paid one outside). */
static void plan_inactive(struct vat_sqlgen_plan *p, struct vat_rng *rng, const int *roles)
{
    for (size_t i = 0; i < p->nc; i++) {
        if (roles[i] == R_OUTSIDE) {
            int k = (int)vat_rng_range(rng, 1, 3);
            for (int j = 0; j < k; j++)
                vat_sqlgen_add_order(p, rng, (int)i, vat_sqlgen_draw_day(p, rng, false));
        } else if (roles[i] == R_UNPAID) {
            int k = (int)vat_rng_range(rng, 1, 2);
            for (int j = 0; j < k; j++) {
                vat_sqlgen_add_order(p, rng, (int)i, vat_sqlgen_draw_day(p, rng, true));
                p->o[p->no - 1].status = 1 + (int)vat_rng_below(rng, N_UNPAID);
            }
            if (vat_rng_chance(rng, 0.5))
                vat_sqlgen_add_order(p, rng, (int)i, vat_sqlgen_draw_day(p, rng, false));
        }
    }
}

/* How a plan fills: target[i] (when not NULL) is the number of in-window
 * orders an active customer gets, else 1 plus a share of the `extra`
 * orders; each of the edge_rounds puts one order on every day next to a
 * window edge; n_null guest checkouts and n_unknown orders of unknown
 * customers come last. */
struct plan_fill {
    const int *target;
    size_t extra, n_null, n_unknown;
    int edge_rounds;
};

/* Fills a plan whose customers have their roles. */
static void fill_plan(struct vat_sqlgen_plan *p, const struct vat_oc_question *q,
                      struct vat_rng *rng, const int *roles, const struct plan_fill *f)
{
    size_t nactive = 0, extra = f->extra;
    int *active = vat_xcalloc(p->nc, sizeof *active);
    for (size_t i = 0; i < p->nc; i++)
        if (roles[i] == R_ACTIVE)
            active[nactive++] = (int)i;
    plan_inactive(p, rng, roles);
    for (size_t i = 0; i < nactive; i++) {
        int k = f->target ? f->target[active[i]] : 1;
        for (int j = 0; j < k; j++)
            vat_sqlgen_add_order(p, rng, active[i], vat_sqlgen_draw_day(p, rng, true));
    }
    /* Extra orders of active customers, in and out of the window; with
     * targets only out of it, so the targets hold (and none without a
     * window, where every order is in it). */
    if (f->target && q->filter == VAT_OC_NONE)
        extra = 0;
    for (size_t j = 0; j < extra && nactive; j++) {
        int who = active[vat_rng_below(rng, (uint32_t)nactive)];
        bool in = f->target ? false : vat_rng_chance(rng, 0.7);
        vat_sqlgen_add_order(p, rng, who, vat_sqlgen_draw_day(p, rng, in));
    }
    int32_t days[4];
    size_t nb = nactive && !f->target ? vat_sqlgen_boundary_days(p, days) : 0;
    for (int round = 0; round < f->edge_rounds; round++) {
        for (size_t k = 0; k < nb; k++) {
            vat_sqlgen_add_order(p, rng, active[vat_rng_below(rng, (uint32_t)nactive)], days[k]);
            /* the last instant of a day punishes comparing a timestamp
             * with the bare date of the window's end */
            p->o[p->no - 1].secs = 86399 - (int32_t)vat_rng_below(rng, 600);
        }
    }
    /* unpaid orders of active customers inside the window */
    for (size_t k = 0; q->kind->paid && k < extra / 3 + 1 && nactive; k++) {
        int who = active[vat_rng_below(rng, (uint32_t)nactive)];
        int32_t day = vat_sqlgen_draw_day(p, rng, true);
        vat_sqlgen_add_order(p, rng, who, day);
        p->o[p->no - 1].status = 1 + (int)vat_rng_below(rng, N_UNPAID);
    }
    for (size_t k = 0; k < f->n_null; k++)
        vat_sqlgen_add_order(p, rng, VAT_SQLGEN_CUST_NULL, vat_sqlgen_draw_day(p, rng, true));
    for (size_t k = 0; k < f->n_unknown; k++) {
        vat_sqlgen_add_order(p, rng, VAT_SQLGEN_CUST_UNKNOWN, vat_sqlgen_draw_day(p, rng, true));
        p->o[p->no - 1].unknown = vat_sqlgen_unknown_id(p, rng);
    }
    free(active);
}

/* Main fixture: realistic; 2 to 4 customers without orders, customers
 * with orders outside the window only (and, paid, with unpaid orders
 * only), orders on each side of every window edge, now and then a guest
 * checkout or an unknown customer. */
static void plan_main(const struct vat_oc_question *q, struct vat_rng *rng,
                      struct vat_sqlgen_plan *p)
{
    bool paid = q->kind->paid;
    long n = (long)vat_rng_range(rng, q->rows_min, q->rows_max);
    size_t nc = (size_t)(n / 3 < 8 ? 8 : n / 3 > 40 ? 40 : n / 3);
    vat_sqlgen_draw_customers(p, q->coded, q->code_prefix, q->side, rng, nc);
    int *roles = vat_xcalloc(nc, sizeof *roles);
    vat_sqlgen_mark_roles(roles, nc, rng, (size_t)vat_rng_range(rng, 2, 4), R_NONE);
    if (q->filter != VAT_OC_NONE)
        vat_sqlgen_mark_roles(roles, nc, rng, (size_t)vat_rng_range(rng, 1, 2), R_OUTSIDE);
    if (paid)
        vat_sqlgen_mark_roles(roles, nc, rng, (size_t)vat_rng_range(rng, 1, 2), R_UNPAID);
    /* one draw per statement (docs/determinism.md), in the order each
     * template's corpus was drawn in, so its bytes stay */
    struct plan_fill f = {.extra = paid ? 3 : 0, .edge_rounds = 1};
    if (paid) {
        f.n_null = vat_rng_below(rng, 2);
        f.n_unknown = vat_rng_below(rng, 2);
    } else {
        f.n_unknown = vat_rng_below(rng, 2);
        f.n_null = vat_rng_below(rng, 2);
    }
    fill_plan(p, q, rng, roles, &f);
    /* then orders of active customers, in and out of the window, up to n */
    int *active = vat_xcalloc(nc, sizeof *active);
    size_t nactive = 0;
    for (size_t i = 0; i < nc; i++)
        if (roles[i] == R_ACTIVE)
            active[nactive++] = (int)i;
    while ((long)p->no < n && nactive) {
        int who;
        int32_t day;
        if (paid) {
            who = active[vat_rng_below(rng, (uint32_t)nactive)];
            bool in = vat_rng_chance(rng, 0.7);
            day = vat_sqlgen_draw_day(p, rng, in);
        } else {
            bool in = vat_rng_chance(rng, 0.7);
            day = vat_sqlgen_draw_day(p, rng, in);
            who = active[vat_rng_below(rng, (uint32_t)nactive)];
        }
        vat_sqlgen_add_order(p, rng, who, day);
    }
    free(active);
    free(roles);
}

/* Variant "edges": the customers with the smallest and the largest id
 * have no orders, guest checkouts and orders of unknown customers, and
 * several orders on every window edge. */
static void plan_edges(const struct vat_oc_question *q, struct vat_rng *rng,
                       struct vat_sqlgen_plan *p)
{
    size_t nc = (size_t)vat_rng_range(rng, 6, 10);
    vat_sqlgen_draw_customers(p, q->coded, q->code_prefix, q->side, rng, nc);
    int *roles = vat_xcalloc(nc, sizeof *roles);
    roles[0] = roles[nc - 1] = R_NONE;
    if (q->filter != VAT_OC_NONE)
        vat_sqlgen_mark_roles(roles, nc, rng, 1, R_OUTSIDE);
    if (q->kind->paid)
        vat_sqlgen_mark_roles(roles, nc, rng, 1, R_UNPAID);
    struct plan_fill f = {.n_null = 2, .n_unknown = 2, .edge_rounds = 2};
    f.extra = (size_t)vat_rng_range(rng, 6, 14);
    fill_plan(p, q, rng, roles, &f);
    free(roles);
}

/* Variant "ties": counts drawn from a small set so several customers tie
 * at every count, three customers share a name, and some have orders
 * outside the window only. */
static void plan_ties(const struct vat_oc_question *q, struct vat_rng *rng,
                      struct vat_sqlgen_plan *p)
{
    size_t nc = (size_t)vat_rng_range(rng, 7, 11);
    vat_sqlgen_draw_customers(p, q->coded, q->code_prefix, q->side, rng, nc);
    int *roles = vat_xcalloc(nc, sizeof *roles), *target = vat_xcalloc(nc, sizeof *target);
    vat_sqlgen_mark_roles(roles, nc, rng, 2, R_NONE);
    if (q->filter != VAT_OC_NONE)
        vat_sqlgen_mark_roles(roles, nc, rng, 1, R_OUTSIDE);
    for (size_t i = 0; i < nc; i++)
        target[i] = (int)vat_rng_range(rng, 1, 2) + (i % 3 == 0);
    /* a third customer with the shared name */
    size_t a = vat_rng_below(rng, (uint32_t)nc),
           b = (a + 1 + vat_rng_below(rng, (uint32_t)nc - 1)) % nc;
    memcpy(p->c[b].name, p->c[a].name, sizeof p->c[b].name);
    struct plan_fill f = {.target = target, .n_null = 1};
    f.extra = (size_t)vat_rng_range(rng, 2, 6);
    fill_plan(p, q, rng, roles, &f);
    free(roles);
    free(target);
}

/* Variant "single": one customer has orders in the window, the others
 * none (or orders outside it only). */
static void plan_single(const struct vat_oc_question *q, struct vat_rng *rng,
                        struct vat_sqlgen_plan *p)
{
    size_t nc = (size_t)vat_rng_range(rng, 3, 6);
    vat_sqlgen_draw_customers(p, q->coded, q->code_prefix, q->side, rng, nc);
    int *roles = vat_xcalloc(nc, sizeof *roles);
    size_t keep = vat_rng_below(rng, (uint32_t)nc);
    for (size_t i = 0; i < nc; i++)
        if (i != keep)
            roles[i] = q->filter != VAT_OC_NONE && vat_rng_chance(rng, 0.5) ? R_OUTSIDE : R_NONE;
    struct plan_fill f = {.n_unknown = 1};
    f.extra = (size_t)vat_rng_range(rng, 1, 4);
    fill_plan(p, q, rng, roles, &f);
    free(roles);
}

static int insert_order(struct vat_sqlw *w, const struct vat_oc_question *q,
                        const struct vat_sqlgen_plan *p, const struct vat_sqlgen_ord *o,
                        int64_t oid)
{
    char when[20], key[32];
    if (q->timestamps)
        vat_fmt_timestamp((int64_t)o->day * 86400 + o->secs, when);
    else
        vat_fmt_date(o->day, when);
    double amount = (double)o->cents / 100.0;
    const char *ch = channels[o->channel];
    /* with a status column its value follows the date */
    const char *st = q->status_col ? statuses[o->status] : NULL;
    if (o->cust == VAT_SQLGEN_CUST_NULL)
        return st ? vat_sqlw_insert(w, q->insert_order, "intttd", oid, when, st, ch, amount)
                  : vat_sqlw_insert(w, q->insert_order, "inttd", oid, when, ch, amount);
    int64_t num = o->cust == VAT_SQLGEN_CUST_UNKNOWN ? o->unknown : p->c[o->cust].num;
    if (q->coded) {
        vat_sqlgen_fmt_key(q->coded, q->code_prefix, num, key);
        return st ? vat_sqlw_insert(w, q->insert_order, "ittttd", oid, key, when, st, ch, amount)
                  : vat_sqlw_insert(w, q->insert_order, "itttd", oid, key, when, ch, amount);
    }
    return st ? vat_sqlw_insert(w, q->insert_order, "iitttd", oid, num, when, st, ch, amount)
              : vat_sqlw_insert(w, q->insert_order, "iittd", oid, num, when, ch, amount);
}

static int fill(void *ctx, struct vat_rng *rng, int corner, struct vat_sqlw *w, struct vat_err *e)
{
    const struct vat_oc_question *q = ctx;
    struct vat_sqlgen_plan p = {
        .w = {q->span_lo, q->span_hi, q->lo, q->hi, q->filter == VAT_OC_NONE},
        .n_channels = VAT_N_OF(channels),
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
        rc = vat_sqlgen_insert_customer(w, q->insert_customer, q->coded, q->code_prefix,
                                        &p.c[perm[i]]);
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

static json_t *build_params(const struct vat_oc_question *q)
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
    json_object_set_new(p, "date_format", json_string(vat_oc_date_format(q)));
    if (q->status_col)
        json_object_set_new(p, "status_column", json_string(q->status_col));
    json_t *w = json_object();
    json_object_set_new(w, "kind", json_string(filter_names[q->filter]));
    switch (q->filter) {
    case VAT_OC_YEAR: json_object_set_new(w, "year", json_integer(q->year)); break;
    case VAT_OC_SINCE:
        json_object_set_new(w, "from", json_string(vat_fmt_date(q->lo, d1)));
        break;
    case VAT_OC_BEFORE:
        json_object_set_new(w, "before", json_string(vat_fmt_date(q->hi + 1, d1)));
        break;
    case VAT_OC_RANGE:
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

int vat_oc_write(struct vat_task *t, struct vat_rng *rng, struct vat_oc_question *q,
                 struct vat_err *e)
{
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
    return 0;
}

/* ---- the gold query ---------------------------------------------------------- */

/* The window condition on the order date, or nothing without a window.
 * Timestamps are compared by their day, so a bound is one day; with
 * as_text (the mistake) the timestamp is compared with the bare date. */
static void put_window(struct vat_buf *b, const struct vat_oc_question *q, bool as_text)
{
    char d1[11], d2[11];
    char *col = q->timestamps && !as_text ? vat_xasprintf("date(%s.%s)", q->oa, q->date_col)
                                          : vat_xasprintf("%s.%s", q->oa, q->date_col);
    switch (q->filter) {
    case VAT_OC_YEAR:
        vat_buf_printf(b, "strftime('%%Y', %s.%s) = '%04d'", q->oa, q->date_col, q->year);
        break;
    case VAT_OC_SINCE: vat_buf_printf(b, "%s >= '%s'", col, vat_fmt_date(q->lo, d1)); break;
    case VAT_OC_BEFORE: vat_buf_printf(b, "%s < '%s'", col, vat_fmt_date(q->hi + 1, d1)); break;
    case VAT_OC_RANGE:
        vat_buf_printf(b, "%s >= '%s' AND %s <= '%s'", col, vat_fmt_date(q->lo, d1), col,
                       vat_fmt_date(q->hi, d2));
        break;
    default: break;
    }
    free(col);
}

char *vat_oc_query(const struct vat_oc_question *q, int m)
{
    const char *c = q->ca, *o = q->oa;
    /* the conditions on the order: in the ON clause, or (the mistake) in
     * WHERE, where they drop the customers without a matching order */
    struct vat_buf cond = VAT_BUF_INIT, b = VAT_BUF_INIT;
    const char *and = m & VAT_OC_M_WHERE ? "\n  AND " : "\n    AND ";
    if (q->status_col && !(m & VAT_OC_M_STATUS))
        vat_buf_printf(&cond, "%s.%s = 'paid'", o, q->status_col);
    if (q->filter != VAT_OC_NONE) {
        if (cond.len)
            vat_buf_puts(&cond, and);
        put_window(&cond, q, m & VAT_OC_M_WINDOW);
    }
    vat_buf_printf(&b, "SELECT %s.%s", c, q->key);
    if (q->with_name)
        vat_buf_printf(&b, ", %s.%s", c, q->name_col);
    if (m & VAT_OC_M_STAR)
        vat_buf_printf(&b, ", COUNT(*) AS %s\n", q->count_name);
    else
        vat_buf_printf(&b, ", COUNT(%s.%s) AS %s\n", o, q->oid, q->count_name);
    vat_buf_printf(&b, "FROM %s AS %s\nLEFT JOIN %s AS %s ON %s.%s = %s.%s", q->ctable, c,
                   q->otable, o, o, q->fk, c, q->key);
    if (cond.len)
        vat_buf_printf(&b, m & VAT_OC_M_WHERE ? "\nWHERE %s" : "\n    AND %s", cond.data);
    vat_buf_release(&cond);
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

int vat_oc_reference(struct vat_task *t, struct vat_err *e)
{
    char *gold = vat_oc_query(t->priv, 0);
    return vat_sqlgen_accept_gold(t, gold, true, REL_TOL, ABS_TOL, e);
}

/* The second derivation: plain row reads counted in C. */
static json_t *derive_rows(const void *question, const char *root, const char *rel,
                           struct vat_err *e)
{
    const struct vat_oc_question *q = question;
    const struct vat_sqlgen_count_query c = {
        .ctable = q->ctable, .key = q->key, .name_col = q->name_col,
        .otable = q->otable, .fk = q->fk, .date_col = q->date_col, .status_col = q->status_col,
        .lo = q->lo, .hi = q->hi, .order = q->order, .with_name = q->with_name,
    };
    return vat_sqlgen_count_orders(&c, root, rel, e);
}

int vat_oc_confirm(const struct vat_task *t, struct vat_err *e)
{
    return vat_sqlgen_confirm(t, derive_rows, t->priv, REL_TOL, ABS_TOL, e);
}

/* ---- the prompt ---------------------------------------------------------------- */

int vat_oc_prompt_data(struct vat_buf *b, struct vat_task *t, const struct vat_oc_question *q,
                       const char *const *kv, struct vat_err *e)
{
    struct vat_buf data = VAT_BUF_INIT;
    const char *tabs[2] = {q->ctable, q->otable};
    bool cut = false;
    if (vat_sqlgen_render(t->root, t->fixture[0].path, tabs, 2, vat_task_inline_cap(t), &data,
                          &cut, e) != 0) {
        vat_buf_release(&data);
        return -1;
    }
    /* The schema is always shown: it is all a query needs (the variant
     * databases are hidden by design, docs/tables.md). */
    t->self_contained = true;
    vat_prompt_open(b, t, kv);
    char *what = vat_xasprintf("[[a shop's customers, `%s`, and their orders, `%s`|two tables "
                               "of a shop: its customers, `%s`, and their orders, `%s`|a "
                               "shop's customer table `%s` and its order table `%s`]]",
                               q->ctable, q->otable, q->ctable, q->otable, q->ctable,
                               q->otable);
    vat_sqlgen_prompt_intro(b, t, what, cut ? "the leading rows of each table" : "all the rows");
    free(what);
    vat_buf_putn(b, data.data, data.len);
    if (cut)
        vat_buf_puts(b, "\nOnly the leading rows fit here; the full tables are in the file.\n");
    vat_buf_release(&data);
    return 0;
}

void vat_oc_prompt_end(struct vat_buf *b, struct vat_task *t, const struct vat_oc_question *q)
{
    struct vat_sqlgen_count_query cq = {.ctable = q->ctable, .key = q->key,
                                        .name_col = q->name_col, .otable = q->otable,
                                        .fk = q->fk, .date_col = q->date_col,
                                        .order = q->order, .with_name = q->with_name};
    vat_sqlgen_prompt_count_columns(b, t, &cq, q->count_name);
    vat_buf_puts(b, "\n");
    vat_sqlgen_prompt_close(b, t);
    t->prompt = vat_buf_detach(b);
}
