/* join_aggregate.c — the join_aggregate analytics template: a SQLite shop
 * database with orders(order_id, customer_id, amount, ordered_on) and
 * customer_history(customer_id, country, valid_from), where a customer has
 * one row per move, and the total order amount per customer's CURRENT
 * country (the country of the latest valid_from).  The trap joins every
 * history row, so an order of a customer who moved is counted once per
 * row (fan-out); every fixture holds a customer with three history rows
 * and orders, so the trap always differs.  Gold is SQL over the file
 * opened read-only; confirm aggregates plain row reads in C.
 * Exports vat_tmpl_join_aggregate. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analytics.h"
#include "sqlgen.h"
#include "sqlio.h"
#include "template.h"
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
static const char *const ja_tables[] = {"orders", "customer_history"};
static const char *const ja_columns[] = {
    "orders.order_id",           "orders.customer_id",       "orders.amount",
    "orders.ordered_on",         "customer_history.customer_id",
    "customer_history.country", "customer_history.valid_from",
};

static const struct vat_param ja_params[] = {
    {.name = "rows_min", .type = VAT_PARAM_INT, .def = 20, .min = 5, .max = 2000,
     .doc = "fewest orders in a fixture"},
    {.name = "rows_max", .type = VAT_PARAM_INT, .def = 100, .min = 5, .max = 2000,
     .doc = "most orders in a fixture"},
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
    {0},
};

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

/* One history row, for the table's storage order. */
struct ja_hist {
    int cust, k;
};

/* Sorts a change log: by valid_from, then customer id. */
static const struct ja_customer *ja_sort_ctx;

static int ja_hist_cmp(const void *a, const void *b)
{
    const struct ja_hist *x = a, *y = b;
    const struct ja_customer *cx = &ja_sort_ctx[x->cust], *cy = &ja_sort_ctx[y->cust];
    if (cx->from[x->k] != cy->from[y->k])
        return (cx->from[x->k] > cy->from[y->k]) - (cx->from[x->k] < cy->from[y->k]);
    int c = strcmp(cx->id, cy->id);
    return c ? c : (x->k > y->k) - (x->k < y->k);
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}
