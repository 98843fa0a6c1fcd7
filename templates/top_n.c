/* top_n.c — the top_n analytics template: a sales CSV (sale_id, sold_on,
 * customer, product, channel, amount) and the N customers with the largest
 * total amount, ties broken by name in ascending byte order, answered as an
 * ordered list of names.  The trap ranks customers by their largest single
 * sale instead of their total: every fixture holds one customer outside the
 * top N whose one big purchase is the largest sale in the file, so the
 * trap's list always names a customer gold leaves out.  Ties in totals are
 * planted, sometimes inside the top N and sometimes at the N-th place, where
 * the name decides who is in.  In the program form (templates/progform.h)
 * the answer is a SELECT ranking by ROW_NUMBER over totals in whole cents,
 * checked on variant CSVs with a decoy, ties at the boundary and inside,
 * blank customers and amounts.  Exports vat_tmpl_top_n. */
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

#define TN_MAX_CUST 40
#define TN_MAX_N 10
#define TN_MIN_SALE 500 /* 5.00: the smallest sale drawn */
#define TN_TOL 1e-9     /* lists of names: no numbers to compare */

enum { C_ID, C_DATE, C_CUSTOMER, C_PRODUCT, C_CHANNEL, C_AMOUNT, TN_NCOLS };
static const char *const tn_cols[TN_NCOLS] = {"sale_id", "sold_on", "customer",
                                              "product", "channel", "amount"};
static const char *const tn_channels[] = {"online", "store", "phone", "marketplace"};

/* The question in both styles.  Natural: "top customers by total spend"
 * ranks by totals, and equal totals go by name in byte order: conventions
 * stated. */
static const char *const tn_q_natural[] = {
    "Who are our top {n} customers {by}?",
    "Which {n} customers are the biggest {by}?",
    "Could you list the {n} biggest customers {by}?",
    "I need our {n} best customers, ranked {by}.",
    "[[For the loyalty programme|For the key-account review|For our thank-you letters]], "
    "which {n} customers rank highest {by}?",
};
static const char *const tn_q_natural_one[] = {
    "Who is our top customer {by}?",
    "Which customer is the biggest {by}?",
    "Who is our biggest customer {by}?",
    "I need our best customer, {by}.",
    "[[For the loyalty programme|For the key-account review]], which customer ranks highest "
    "{by}?",
};
static const char *const tn_c_natural[] = {
    "Customers are told apart by their `customer` value; if two have the same total, the name "
    "that {ties} ranks higher.",
    "A customer is their `customer` value, and on equal totals the name that {ties} goes "
    "first.",
    "[[Tell customers apart|Customers are identified]] by `customer`; a tie on the total goes "
    "to the name that {ties}.",
};
/* The explicit question, ways of asking it; the rules that follow it are
 * the same. */
static const char *const tn_q_explicit[] = {
    "[[Question: which|Which]] {who} the largest total `amount`, summed over all of their "
    "sales?",
    "Sum `amount` over each customer's sales: which {who} the largest total?",
    "Ranking customers by the total `amount` of all their sales, which {who} the most?",
    "Find which {who} the highest total `amount` across all of their sales.",
};
static const char *const tn_r_rank[] = {
    "Rank the customers by their total, largest first. ",
    "[[Rank|Order]] the customers by total, the largest first. ",
};
static const char *const tn_r_explicit[] = {
    "[[A customer is identified by the `customer` value exactly as written|The `customer` "
    "value exactly as written identifies a customer]]. [[When two customers have exactly the "
    "same total|Of two customers with exactly the same total|If two customers' totals are "
    "exactly equal]], [[the one whose name comes first|the customer whose name is first]] in "
    "ascending byte order ([[the names compared character by character by their ASCII "
    "codes|names compared by their ASCII codes, character by character]], [[so \"Jo Ann\" "
    "comes before \"Joan Day\", which comes before \"Joe Hill\"|which puts \"Jo Ann\" ahead "
    "of \"Joan Day\" and \"Joan Day\" ahead of \"Joe Hill\"|so \"Jo Ann\" sorts before "
    "\"Joan Day\" and that before \"Joe Hill\"]]) ranks higher; [[this also decides who is in when customers tie for "
    "the last place|the same rule decides who is in when customers tie for the last "
    "place]].",
};
/* The columns as the data description lists them, in each style. */
static const struct vat_prompt_col tn_cols_natural[] = {
    {"sale_id", ""},
    {"sold_on", "[[YYYY-MM-DD|the sale date, YYYY-MM-DD]]"},
    {"customer", "[[the buyer's name|who bought|the customer's name]]"},
    {"product", ""},
    {"channel", "[[|where it sold]]"},
    {"amount", "[[the sale's total, two decimals|the sale total with two decimals|what the sale "
        "came to, two decimals]]"},
};
static const struct vat_prompt_col tn_cols_explicit[] = {
    {"sale_id", ""},
    {"sold_on", "[[the sale date, YYYY-MM-DD|YYYY-MM-DD, the date of the sale]]"},
    {"customer", "[[the buyer's name|the name of the buyer]]"},
    {"product", ""},
    {"channel", "[[where the sale was made|the sales channel]]"},
    {"amount", "[[the sale's total, a decimal with two places|the total of the sale, two "
        "decimal places|the sale amount with two decimal places]]"},
};
static const char *const tn_giveaways[] = {
    "summed over", "all of their sales", "single sale", "largest sale", "tolerance", NULL,
};
/* The ranking's trap, which a natural prompt never describes. */
static const char *const tn_defects[] = {"largest single sale", "biggest single sale",
                                         "largest sale", "one big sale", NULL};
static const char *const tn_answer_columns[] = {"customer", "amount", NULL};
static const char *const tn_states_rank[] = {
    "by total spend", "by what they spent in total", "by the sum of all their purchases", NULL,
};
static const char *const tn_states_ties[] = {
    "sorts first in byte (ASCII) order", "comes first in plain byte order",
    "is first in ASCII (byte) order", NULL,
};
static const struct vat_convention tn_conventions[] = {
    {"rank_by", tn_states_rank},
    {"ties", tn_states_ties},
    {NULL, NULL},
};

static const struct vat_param tn_params[] = {
    {.name = "rows_min", .type = VAT_PARAM_INT, .def = 20, .min = 5, .max = 2000,
     .doc = "fewest data rows in a fixture (more when the planted totals need them)",
     .role = VAT_PARAM_ROWS},
    {.name = "rows_max", .type = VAT_PARAM_INT, .def = 120, .min = 5, .max = 2000,
     .doc = "most data rows in a fixture", .role = VAT_PARAM_ROWS},
    {.name = "customers_min", .type = VAT_PARAM_INT, .def = 6, .min = 3, .max = TN_MAX_CUST,
     .doc = "fewest distinct customers (at least N + 2 are drawn)"},
    {.name = "customers_max", .type = VAT_PARAM_INT, .def = 12, .min = 3, .max = TN_MAX_CUST,
     .doc = "most distinct customers"},
    {.name = "n_min", .type = VAT_PARAM_INT, .def = 3, .min = 1, .max = TN_MAX_N,
     .doc = "smallest N asked for"},
    {.name = "n_max", .type = VAT_PARAM_INT, .def = 5, .min = 1, .max = TN_MAX_N,
     .doc = "largest N asked for"},
    {.name = "boundary_tie_chance", .type = VAT_PARAM_REAL, .def = 0.4, .min = 0, .max = 1,
     .doc = "chance that the N-th and (N+1)-th totals are equal, so the name decides"},
    {.name = "inner_tie_chance", .type = VAT_PARAM_REAL, .def = 0.3, .min = 0, .max = 1,
     .doc = "chance that two customers inside the top N have equal totals"},
    {.name = "amount_max", .type = VAT_PARAM_INT, .def = 4000, .min = 100, .max = 100000,
     .doc = "largest single sale, in whole currency units"},
    VAT_PROGFORM_PARAM,
    {0},
};

/* What the generator planted, for confirm's cross-check. */
struct tn_priv {
    struct vat_an_tally totals; /* customer -> planted cents */
};

static void tn_priv_free(void *p)
{
    struct tn_priv *g = p;
    vat_an_tally_release(&g->totals);
    free(g);
}

/* The question and what decides it, in the task's style (both answer
 * forms), for the top n. */
static void tn_say_question(struct vat_buf *b, struct vat_task *t, long n)
{
    char nbuf[24];
    snprintf(nbuf, sizeof nbuf, "%ld", n);
    if (vat_prompt_natural(t)) {
        const char *kv[] = {"n", nbuf, "by", vat_prompt_state(t, "rank_by"), NULL};
        if (n == 1)
            VAT_PROMPT_PUT(b, t, 'q', tn_q_natural_one, kv);
        else
            VAT_PROMPT_PUT(b, t, 'q', tn_q_natural, kv);
        vat_buf_putc(b, ' ');
        const char *ckv[] = {"ties", vat_prompt_state(t, "ties"), NULL};
        VAT_PROMPT_PUT(b, t, 'c', tn_c_natural, ckv);
        return;
    }
    char who[48];
    if (n == 1)
        snprintf(who, sizeof who, "customer has");
    else
        snprintf(who, sizeof who, "%ld customers have", n);
    const char *kv[] = {"who", who, NULL};
    VAT_PROMPT_PUT(b, t, 'q', tn_q_explicit, kv);
    vat_buf_putc(b, ' ');
    if (n != 1)
        VAT_PROMPT_PUT(b, t, 'r', tn_r_rank, NULL);
    VAT_PROMPT_PUT(b, t, 'r', tn_r_explicit, NULL);
}

/* ---- ranking ------------------------------------------------------------- */

/* Largest sum first; equal sums by key in ascending byte order. */
static int tn_rank_cmp(const void *a, const void *b)
{
    const struct vat_an_entry *x = a, *y = b;
    if (x->sum != y->sum)
        return x->sum > y->sum ? -1 : 1;
    return strcmp(x->key, y->key);
}

/* The first n keys of t ranked by each entry's sum (t is reordered), as a
 * JSON array of strings. */
static json_t *tn_rank(struct vat_an_tally *t, size_t n)
{
    if (t->n > 1)
        qsort(t->e, t->n, sizeof *t->e, tn_rank_cmp);
    json_t *a = json_array();
    for (size_t i = 0; i < n && i < t->n; i++)
        json_array_append_new(a, json_string(t->e[i].key));
    return a;
}

/* ---- generation ---------------------------------------------------------- */

/* Customers: mostly people, sometimes a business account. */
static const struct vat_customer_mix tn_customers = {.company = 1, .person = 4};

static int cmp_i64_desc(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x < y) - (x > y);
}

/* Splits total into m sales, each in [TN_MIN_SALE, cap], by random weights
 * (a realistic spread rather than one large sale and many tiny ones).
 * Needs m * TN_MIN_SALE <= total <= m * cap. */
static void tn_split(struct vat_rng *r, int64_t total, long m, int64_t cap, int64_t *out)
{
    int64_t rest = total - m * TN_MIN_SALE, wsum = 0, given = 0;
    int64_t *w = vat_xcalloc((size_t)m, sizeof *w);
    for (long j = 0; j < m; j++) {
        w[j] = vat_rng_range(r, 1, 40);
        w[j] *= w[j]; /* squared: a few sales clearly larger than the rest */
        wsum += w[j];
    }
    for (long j = 0; j < m; j++) {
        int64_t add = rest * w[j] / wsum;
        out[j] = TN_MIN_SALE + add;
        given += add;
    }
    for (long j = 0; given < rest; j = (j + 1) % m, given++)
        out[j]++;
    /* Anything over the cap moves to sales with room; it always fits. */
    int64_t carry = 0;
    for (long j = 0; j < m; j++) {
        if (out[j] > cap) {
            carry += out[j] - cap;
            out[j] = cap;
        }
    }
    for (long j = 0; j < m && carry > 0; j++) {
        int64_t take = cap - out[j] < carry ? cap - out[j] : carry;
        out[j] += take;
        carry -= take;
    }
    free(w);
}

struct tn_sale {
    int cust;
    int64_t cents;
};

/* The planted design of one fixture. */
struct tn_plan {
    int k, n;                     /* customers, N                          */
    int64_t big, cap;             /* the decoy's big sale; every other cap */
    int64_t total[TN_MAX_CUST];   /* by role: [0,n) top, [n,k-1) rest,     */
    long sales[TN_MAX_CUST];      /*   k-1 the decoy                       */
    int64_t decoy_small[2];
    int ndecoy_small;
    bool boundary_tie, inner_tie;
};

/* Draws the totals by role.  The decoy (role k-1) has the single largest
 * sale, yet every top-N total is strictly above the decoy's total, so
 * ranking by the largest sale puts the decoy first and gold leaves it out. */
static void tn_plan_totals(struct vat_rng *r, struct tn_plan *p, int64_t max_cents,
                           double btie, double itie)
{
    p->big = vat_rng_range(r, max_cents / 2, max_cents);
    p->cap = p->big * 7 / 10;
    int64_t decoy = p->big;
    p->ndecoy_small = (int)vat_rng_below(r, 3);
    for (int i = 0; i < p->ndecoy_small; i++) {
        int64_t hi = p->cap < 30000 ? p->cap : 30000;
        p->decoy_small[i] = vat_rng_range(r, TN_MIN_SALE, hi);
        decoy += p->decoy_small[i];
    }
    p->total[p->k - 1] = decoy;

    for (int i = 0; i < p->n; i++)
        p->total[i] = decoy + vat_rng_range(r, 100, p->big + p->big / 2);
    qsort(p->total, (size_t)p->n, sizeof p->total[0], cmp_i64_desc);
    p->inner_tie = p->n >= 2 && vat_rng_chance(r, itie);
    if (p->inner_tie) {
        int j = (int)vat_rng_below(r, (uint32_t)(p->n - 1));
        p->total[j + 1] = p->total[j];
    }

    int64_t tn = p->total[p->n - 1];
    int64_t lo = tn / 6 > 2 * TN_MIN_SALE ? tn / 6 : 2 * TN_MIN_SALE;
    for (int i = p->n; i < p->k - 1; i++)
        p->total[i] = vat_rng_range(r, lo, tn - 1);
    p->boundary_tie = vat_rng_chance(r, btie);
    if (p->boundary_tie)
        p->total[p->n] = tn;
}

/* Sales per customer: enough for every sale to stay under the cap, then
 * the remaining rows spread by weight up to n rows in all.  Returns the
 * number of rows. */
static size_t tn_plan_sales(struct vat_rng *r, struct tn_plan *p, long want)
{
    long have = 0, most[TN_MAX_CUST];
    uint32_t weight[TN_MAX_CUST];
    for (int i = 0; i < p->k; i++) {
        if (i == p->k - 1) {
            p->sales[i] = 1 + p->ndecoy_small;
            most[i] = p->sales[i];
            weight[i] = 0;
        } else {
            p->sales[i] = (long)((p->total[i] + p->cap - 1) / p->cap);
            most[i] = (long)(p->total[i] / TN_MIN_SALE);
            weight[i] = (uint32_t)vat_rng_range(r, 1, 4);
        }
        have += p->sales[i];
    }
    while (have < want) {
        int g = (int)vat_rng_weighted(r, weight, (size_t)p->k);
        /* A customer already at its most sales passes the row on. */
        int tries = 0;
        while (p->sales[g] >= most[g] && tries++ < p->k)
            g = (g + 1) % p->k;
        if (p->sales[g] >= most[g])
            break;
        p->sales[g]++;
        have++;
    }
    return (size_t)have;
}

/* The nrows sales of plan p, each customer's total split into its sales
 * (the decoy's as planted), in random order.  A new array. */
static struct tn_sale *tn_sales(struct vat_rng *r, const struct tn_plan *pl, size_t nrows)
{
    struct tn_sale *sale = vat_xcalloc(nrows, sizeof *sale);
    size_t k = 0;
    for (int i = 0; i < pl->k; i++) {
        int64_t *part = vat_xcalloc((size_t)pl->sales[i], sizeof *part);
        if (i == pl->k - 1) {
            part[0] = pl->big;
            for (int s = 0; s < pl->ndecoy_small; s++)
                part[1 + s] = pl->decoy_small[s];
        } else {
            tn_split(r, pl->total[i], pl->sales[i], pl->cap, part);
        }
        for (long s = 0; s < pl->sales[i]; s++, k++) {
            sale[k].cust = i;
            sale[k].cents = part[s];
        }
        free(part);
    }
    vat_rng_shuffle(r, sale, nrows, sizeof *sale);
    return sale;
}

static int tn_generate(struct vat_task *t, struct vat_rng *r, struct vat_err *e)
{
    long rmin = vat_task_int(t, "rows_min"), rmax = vat_task_int(t, "rows_max");
    long cmin = vat_task_int(t, "customers_min"), cmax = vat_task_int(t, "customers_max");
    long nmin = vat_task_int(t, "n_min"), nmax = vat_task_int(t, "n_max");
    double btie = vat_task_real(t, "boundary_tie_chance");
    double itie = vat_task_real(t, "inner_tie_chance");
    int64_t max_cents = (int64_t)vat_task_int(t, "amount_max") * 100;
    if (rmax < rmin)
        rmax = rmin;
    if (cmax < cmin)
        cmax = cmin;
    if (nmax < nmin)
        nmax = nmin;

    struct tn_plan p = {0};
    p.n = (int)vat_rng_range(r, nmin, nmax);
    p.k = (int)vat_rng_range(r, cmin, cmax);
    if (p.k < p.n + 2)
        p.k = p.n + 2; /* the decoy and at least one customer at N+1 */
    if (p.k > TN_MAX_CUST)
        return vat_err_set(e, "%s: n_min %ld needs more than %d customers", t->id, nmin,
                           TN_MAX_CUST);
    tn_plan_totals(r, &p, max_cents, btie, itie);
    size_t nrows = tn_plan_sales(r, &p, vat_rng_range(r, rmin, rmax));

    /* Distinct names, in random order, so which of two tied customers wins
     * on name is a coin toss. */
    char (*name)[64] = vat_xcalloc((size_t)p.k, sizeof *name);
    if (vat_gen_unique(r, vat_gen_customer, &tn_customers, name[0], (size_t)p.k,
                       sizeof name[0]) < (size_t)p.k) {
        free(name);
        return vat_err_set(e, "%s: cannot draw %d distinct customer names", t->id, p.k);
    }

    struct tn_sale *sale = tn_sales(r, &p, nrows);

    /* Dates ascend with the sale ids, as an export sorted by id would. */
    int32_t start = vat_date_from_civil(2022, 1, 1) + (int32_t)vat_rng_range(r, 0, 1000);
    int32_t span = (int32_t)vat_rng_range(r, 30, 180);
    int32_t *days = vat_gen_days_sorted(r, nrows, start, start + span);

    size_t nprod = 0;
    const char *const *prod = vat_words("product", &nprod);
    struct vat_csv c = VAT_CSV_INIT;
    vat_csv_add_row(&c, tn_cols, TN_NCOLS);
    long id = (long)vat_rng_range(r, 10000, 90000);
    struct tn_priv *pv = vat_xcalloc(1, sizeof *pv);
    char money[32], date[11];
    for (size_t i = 0; i < nrows; i++) {
        id += (long)vat_rng_range(r, 1, 3);
        id = vat_side_next_id(t->side, "S-", 6, id);
        vat_csv_row_begin(&c);
        vat_csv_addf(&c, "S-%06ld", id);
        vat_csv_add(&c, vat_fmt_date(days[i], date));
        vat_csv_add(&c, name[sale[i].cust]);
        vat_csv_add(&c, prod && nprod ? prod[vat_rng_below(r, (uint32_t)nprod)] : "Gift Card");
        vat_csv_add(&c, VAT_PICK(r, tn_channels));
        vat_csv_add(&c, vat_fmt_cents(sale[i].cents, money, sizeof money));
        vat_an_tally_add(&pv->totals, name[sale[i].cust], sale[i].cents);
    }
    free(days);
    free(sale);
    free(name);
    t->priv = pv;
    t->priv_free = tn_priv_free;

    /* the params are known before the file is written: the trap modules
     * plant their copies by them */
    t->params = json_pack("{s:i, s:s, s:s, s:s, s:s}", "n", p.n, "group_by", "customer",
                          "rank_by", "sum of amount, descending", "ties",
                          "customer name, ascending byte order", "answer", "ordered list");
    if (vat_an_write_csv(t, &c, ".csv", "main", e) < 0) {
        vat_csv_release(&c);
        return -1;
    }

    struct vat_buf b = VAT_BUF_INIT;
    char nbuf[16];
    snprintf(nbuf, sizeof nbuf, "%d", p.n);
    const char *example = p.n == 1 ? "[\"<customer ranked 1>\"]"
                          : p.n == 2 ? "[\"<customer ranked 1>\", \"<customer ranked 2>\"]"
                                     : "[\"<customer ranked 1>\", \"<customer ranked 2>\", ...]";
    bool nat = vat_prompt_natural(t);
    struct vat_buf cols = VAT_BUF_INIT;
    vat_prompt_cols(&cols, t, nat ? tn_cols_natural : tn_cols_explicit,
                    VAT_N_OF(tn_cols_natural), NULL);
    const char *kv[] = {
        "topic", "[[our best customers|customer spend|the sales ledger]]",
        "what", nat ? "[[our retail sales export|our shop's sales{#pl}|the sales we "
                      "made{#pl}]]"
                    : "[[a sales export from a retail business|the sales of a retail "
                      "business{#pl}|a retailer's sales export]]",
        "unit", "sale",
        "cols", cols.data,
        NULL,
    };
    vat_prompt_open(&b, t, kv);
    vat_prompt_data(&b, t, kv);
    vat_buf_release(&cols);
    vat_buf_puts(&b, "\n\n");
    tn_say_question(&b, t, p.n);
    vat_buf_puts(&b, "\n\n");
    if (nat) {
        char *shape = vat_xasprintf("a JSON array of the %d name%s as written in `customer`, "
                                    "[[best first|from first place down]], like %s",
                                    p.n, p.n == 1 ? "" : "s", example);
        vat_prompt_answer(&b, t, shape);
        free(shape);
    } else {
        char *shape = vat_xasprintf(
            "an array of exactly %d string%s, the customer names spelled exactly as in the "
            "`customer` column, from rank 1 to rank %d, [[for example|like]] %s. The order "
            "matters and [[no name may appear twice|a name may not appear twice]]",
            p.n, p.n == 1 ? "" : "s", p.n, example);
        vat_prompt_answer(&b, t, shape);
        free(shape);
    }
    vat_buf_puts(&b, "\n\n");
    vat_an_prompt_csv(&b, t, 0, &c);
    t->prompt = vat_buf_detach(&b);
    vat_csv_release(&c);


    struct vat_an_spec s = {.shape = "list", .items = "string", .ordered = true, .unique = true,
                            .rel_tol = TN_TOL, .abs_tol = TN_TOL};
    t->spec = vat_an_value_spec(&s);
    return 0;
}

/* ---- gold, confirm, trap ------------------------------------------------- */

/* Reads the fixture back and ranks its customers: by the sum of their sales
 * (gold), or by their largest single sale (the trap).  Refuses a file with
 * fewer than N + 1 customers, where "the top N" would be everyone. */
static json_t *tn_rank_file(const struct vat_task *t, bool by_total, struct vat_err *e)
{
    long n;
    if (vat_an_param_int(t, "n", 1, TN_MAX_N, &n, e) != 0)
        return NULL;
    struct vat_csv c = VAT_CSV_INIT;
    if (vat_an_read_csv(t, 0, tn_cols, TN_NCOLS, &c, e) != 0)
        return NULL;
    struct vat_an_tally rank = VAT_AN_TALLY_INIT;
    json_t *out = NULL;
    for (size_t i = 1; i < c.nrows; i++) {
        int64_t cents;
        const char *who = vat_csv_get(&c, i, C_CUSTOMER);
        if (vat_an_csv_cents(t, 0, &c, i, C_AMOUNT, &cents, e) != 0)
            goto done;
        if (!*who) {
            vat_err_set(e, "%s: '%s' record %zu: blank customer", t->id, t->fixture[0].path,
                        i + 1);
            goto done;
        }
        struct vat_an_entry *x = vat_an_tally_get(&rank, who);
        if (by_total)
            x->sum += cents;
        else if (x->n == 0 || cents > x->sum)
            x->sum = cents;
        x->n++;
    }
    if (rank.n <= (size_t)n) {
        vat_err_set(e, "%s: '%s' has %zu customers, not more than N = %ld", t->id,
                    t->fixture[0].path, rank.n, n);
        goto done;
    }
    out = tn_rank(&rank, (size_t)n);
done:
    vat_an_tally_release(&rank);
    vat_csv_release(&c);
    return out;
}

static int tn_reference(struct vat_task *t, struct vat_err *e)
{
    return vat_an_gold_from(t, tn_rank_file(t, true, e), NULL, e);
}

/* SQL over the CSV loaded into SQLite, summing integer cents and ordering
 * ties by the BINARY collation (byte order); then, when the generator's
 * planted totals are at hand, the ranking they imply. */
static int tn_confirm(const struct vat_task *t, struct vat_err *e)
{
    static const char *const types[TN_NCOLS] = {"TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "REAL"};
    long n;
    if (vat_an_param_int(t, "n", 1, TN_MAX_N, &n, e) != 0)
        return -1;
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT customer FROM sales GROUP BY customer "
             "ORDER BY SUM(CAST(round(amount * 100) AS INTEGER)) DESC, customer COLLATE BINARY "
             "LIMIT %ld",
             n);
    struct vat_an_query q = {.table = "sales", .types = types, .sql = sql, .kind = VAT_AN_LIST};
    int rc = vat_an_confirm_query(t, &q, 0, 0, e);
    if (rc != 0 || !t->priv)
        return rc;
    /* tn_rank reorders its tally, so the planted one is ranked as a copy */
    struct tn_priv *pv = t->priv;
    struct vat_an_tally copy = VAT_AN_TALLY_INIT;
    for (size_t i = 0; i < pv->totals.n; i++)
        vat_an_tally_get(&copy, pv->totals.e[i].key)->sum = pv->totals.e[i].sum;
    json_t *v = tn_rank(&copy, (size_t)n);
    vat_an_tally_release(&copy);
    return vat_an_confirm_value(t, v, "the generator's planted totals", 0, 0, e);
}

static int tn_trap(struct vat_task *t, struct vat_err *e)
{
    return vat_an_trap_from(t, tn_rank_file(t, false, e));
}

/* ---- the program form ------------------------------------------------------ */

static const char *const tn_types[TN_NCOLS] = {"TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "REAL"};
/* No base starts with one of progform's prefixes (shop_, store_,
 * retail_, ...), so no composed name doubles a word. */
static const char *const tn_tables[] = {"sales",        "sales_log",  "customer_sales",
                                        "sales_ledger", "sale_lines", "receipts",
                                        "transactions", "purchases"};
static const char *const tn_outs[] = {"customer",      "top_customer",  "customer_name",
                                      "name",          "buyer",         "best_customer",
                                      "ranked_customer", "client"};

static long tn_task_n(const struct vat_task *t)
{
    return (long)json_integer_value(json_object_get(t->params, "n"));
}

static char *tn_pf_question(struct vat_task *t)
{
    struct vat_buf b = VAT_BUF_INIT;
    tn_say_question(&b, t, tn_task_n(t));
    return vat_buf_detach(&b);
}

/* The tie rule is stated again in SQL terms, so gold's rows are unique;
 * totals compare to the cent, since REAL sums of equal totals made of
 * different sales may differ in their last bits. */
static char *tn_pf_shape(struct vat_task *t, const struct vat_pf_names *n)
{
    long k = tn_task_n(t);
    char ranks[48];
    if (k == 1)
        snprintf(ranks, sizeof ranks, "1 row: the customer ranked 1");
    else
        snprintf(ranks, sizeof ranks, "%ld rows: the customers ranked 1 to %ld", k, k);
    const char *kv[] = {"out", n->out, "ranks", ranks, NULL};
    if (vat_prompt_natural(t))
        return vat_prompt_text(
            t, 's',
            "[[Return|It should return|I'd like]] one column, `{out}` ([[the customer's name as "
            "stored in `customer`|the name as stored]]), and exactly {ranks}, [[best first|rank "
            "1 first]]. [[Compare totals to the cent|Totals compare to the cent]] ([[sums of the "
            "REAL amounts can differ in their last bits|REAL sums can differ in the last "
            "bits]]); [[a sale with no customer counts for nobody|a sale without a customer "
            "belongs to nobody]] and [[a sale with no amount adds nothing|an empty amount adds "
            "nothing]].",
            kv);
    return vat_prompt_text(
        t, 's',
        "[[It must return|The result must have|Return]] one column, `{out}` ([[the customer's "
        "name as stored in `customer`|the name as stored in `customer`]]), and exactly "
        "{ranks}, [[rank 1 first (the largest total first; equal totals by name in ascending "
        "byte order, which is SQLite's default text order)|from rank 1 down (the largest total "
        "leads; a tie in total goes by name in ascending byte order, SQLite's default text "
        "order)|best first: largest total on top, equal totals by name in ascending byte order "
        "(the default text order of SQLite)]]. [[Totals are amounts in cents: "
        "sums of the REAL amounts can differ in their last bits, so compare totals to the "
        "cent|Compare totals to the cent, since sums of REAL amounts can differ in their last "
        "bits|Sums of REAL amounts can differ in the last bits, so totals compare to the "
        "cent]] ([[for example summed in whole cents|summed in whole cents, say]]). [[A sale "
        "whose `customer` is blank (NULL) belongs to no customer and is left out|A sale with a "
        "blank (NULL) `customer` belongs to no customer and is left out]]; [[a blank `amount` "
        "adds nothing to|an empty `amount` counts for nothing in|a blank (NULL) `amount` leaves "
        "unchanged]] [[its customer's total|the total]].",
        kv);
}

/* No LIMIT (a gold query may not cut a tie): the rank is a ROW_NUMBER
 * over a total order, totals summed in whole cents so equal totals are
 * equal whatever sales make them up.  For N = 1 the one row needs no
 * ORDER BY, and `pos < 2` (not `pos = 1`, whose `<=` mutant is the same
 * query) keeps every mutant of the filter visible. */
static char *tn_pf_query(const struct vat_task *t, const struct vat_pf_names *n, const char *agg)
{
    long k = tn_task_n(t);
    char filter[48];
    if (k == 1)
        snprintf(filter, sizeof filter, "WHERE pos < 2");
    else
        snprintf(filter, sizeof filter, "WHERE pos <= %ld\nORDER BY pos", k);
    return vat_xasprintf("SELECT customer AS %s\nFROM (SELECT customer,\n"
                         "             ROW_NUMBER() OVER (ORDER BY %s(ROUND(amount * 100)) DESC, "
                         "customer) AS pos\n"
                         "      FROM %s\n      WHERE customer IS NOT NULL\n"
                         "      GROUP BY customer)\n%s",
                         n->out, agg, n->table, filter);
}

static char *tn_pf_gold(const struct vat_task *t, const struct vat_pf_names *n)
{
    return tn_pf_query(t, n, "SUM");
}

/* The named mistake: customers ranked by their largest single sale. */
static char *tn_pf_trap(const struct vat_task *t, const struct vat_pf_names *n)
{
    return tn_pf_query(t, n, "MAX");
}

/* One row of a variant: who (an index into the names, -1 for a blank
 * customer) and the amount in cents (-1 for a blank amount). */
struct tn_vsale {
    int who;
    int64_t cents;
};

struct tn_vbuild {
    struct tn_vsale *s;
    size_t n, cap;
};

static void tn_vpush(struct tn_vbuild *v, int who, int64_t cents)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 64;
        v->s = vat_xrealloc(v->s, v->cap * sizeof *v->s);
    }
    v->s[v->n++] = (struct tn_vsale){who, cents};
}

/* total split into m sales of at most cap (m raised to what the cap
 * needs, lowered to what TN_MIN_SALE allows).  With ne endings, sale j
 * < ne ends in end[j] cents and every other sale is whole units (total
 * must end in the endings' sum), so how each sale rounds is known. */
static void tn_vsplit(struct vat_rng *r, struct tn_vbuild *v, int who, int64_t total, long m,
                      int64_t cap, const int64_t *end, int ne)
{
    int64_t ends = 0;
    for (int j = 0; j < ne; j++)
        ends += end[j];
    int64_t room = ne ? cap - 200 : cap, rest = total - ends;
    long need = (long)((rest + room - 1) / room), most = (long)(rest / TN_MIN_SALE);
    if (m < need)
        m = need;
    if (m > most)
        m = most;
    if (m < (ne ? ne : 1))
        m = ne ? ne : 1;
    int64_t *part = vat_xcalloc((size_t)m, sizeof *part);
    tn_split(r, rest, m, room, part);
    if (ne) {
        int64_t left = 0;
        for (long j = 0; j < m; j++) {
            left += part[j] % 100;
            part[j] -= part[j] % 100;
        }
        for (long j = 0; left > 0; j = (j + 1) % m, left -= 100)
            part[j] += 100;
        for (int j = 0; j < ne; j++)
            part[j] += end[j];
    }
    for (long j = 0; j < m; j++)
        tn_vpush(v, who, part[j]);
    free(part);
}

/* A customer name not among the first n of name, drawn from r. */
static int tn_fresh_name(struct vat_rng *r, char (*name)[64], size_t n, struct vat_err *e,
                         const char *id)
{
    for (int tries = 0; tries < 64; tries++) {
        vat_gen_customer(r, &tn_customers, name[n], sizeof name[n]);
        bool dup = false;
        for (size_t i = 0; i < n && !dup; i++)
            dup = strcmp(name[i], name[n]) == 0;
        if (!dup)
            return 0;
    }
    return vat_err_set(e, "%s: cannot draw a fresh customer name for a variant", id);
}

/* Variant k: the task's customers (and two new ones) with new sales.
 * Every variant holds a decoy outside the top N whose one sale is the
 * largest of the file (the trap ranks it first; an average or a minimum
 * does too) and who is the main fixture's rank 1 (gold's rows differ from
 * the main fixture's); a customer outside the top N with the most sales
 * (a count is not a total); a customer whose sales all have a blank
 * amount (no qualifying row); sales with a blank customer whose sum
 * beats every customer (a query that keeps them returns a NULL name);
 * blank product and channel cells.  Boundaries: variant 1 ties the N-th
 * and the (N+1)-th totals (the name decides who is in), variant 2 ties
 * two totals inside the top N and puts the (N+1)-th one cent below the
 * N-th with a name sorting first (totals rounded coarser than the cent
 * let it in), variant 3 has both ties; the tied pair at the boundary is
 * built so that sums scaled off the cent break the tie (tn_vsplit). */
/* A variant's rows into c: its sales v in order, dated ascending, some
 * products and channels left blank. */
static void tn_vcsv(struct vat_rng *r, int side, const struct tn_vbuild *v, char name[][64],
                    struct vat_csv *c)
{
    int32_t start = vat_date_from_civil(2022, 1, 1) + (int32_t)vat_rng_range(r, 0, 1000);
    int32_t span = (int32_t)vat_rng_range(r, 30, 180);
    int32_t *days = vat_gen_days_sorted(r, v->n, start, start + span);
    size_t nprod = 0;
    const char *const *prod = vat_words("product", &nprod);
    vat_csv_add_row(c, tn_cols, TN_NCOLS);
    long id = (long)vat_rng_range(r, 10000, 90000);
    char money[32], date[11];
    for (size_t i = 0; i < v->n; i++) {
        id += (long)vat_rng_range(r, 1, 3);
        id = vat_side_next_id(side, "S-", 6, id);
        bool blank_product = vat_rng_chance(r, 0.15);
        bool blank_channel = vat_rng_chance(r, 0.1);
        const char *pr = prod && nprod ? prod[vat_rng_below(r, (uint32_t)nprod)] : "Gift Card";
        const char *ch = VAT_PICK(r, tn_channels);
        vat_csv_row_begin(c);
        vat_csv_addf(c, "S-%06ld", id);
        vat_csv_add(c, vat_fmt_date(days[i], date));
        vat_csv_add(c, v->s[i].who < 0 ? "" : name[v->s[i].who]);
        vat_csv_add(c, blank_product ? "" : pr);
        vat_csv_add(c, blank_channel ? "" : ch);
        vat_csv_add(c, v->s[i].cents < 0 ? "" : vat_fmt_cents(v->s[i].cents, money, sizeof money));
    }
    free(days);
}

static int tn_pf_variant(const struct vat_task *t, struct vat_rng *r, int k, struct vat_csv *c,
                         struct vat_err *e)
{
    const struct tn_priv *pv = t->priv;
    long nn = tn_task_n(t);
    if (!pv || nn < 1 || nn > TN_MAX_N || pv->totals.n < (size_t)nn + 2 ||
        pv->totals.n > TN_MAX_CUST)
        return vat_err_set(e, "%s: variants need the generator's customers", t->id);
    int n = (int)nn, kc = (int)pv->totals.n;
    char (*name)[64] = vat_xcalloc((size_t)kc + 2, sizeof *name);
    size_t top1 = 0;
    for (size_t i = 0; i < pv->totals.n; i++) {
        const struct vat_an_entry *x = &pv->totals.e[i], *b = &pv->totals.e[top1];
        snprintf(name[i], sizeof name[i], "%s", x->key);
        if (x->sum > b->sum || (x->sum == b->sum && strcmp(x->key, b->key) < 0))
            top1 = i;
    }
    /* The main fixture's rank 1 is this variant's decoy (the last name). */
    char keep[64];
    snprintf(keep, sizeof keep, "%s", name[top1]);
    vat_rng_shuffle(r, name, (size_t)kc, sizeof *name);
    for (int i = 0; i < kc; i++)
        if (strcmp(name[i], keep) == 0) {
            memcpy(name[i], name[kc - 1], sizeof name[i]);
            memcpy(name[kc - 1], keep, sizeof keep);
            break;
        }
    int decoy = kc - 1, partner = n, nnames = kc;
    int counter = n + 1 < decoy ? n + 1 : -1;
    if (counter < 0) {
        if (tn_fresh_name(r, name, (size_t)nnames, e, t->id) != 0)
            goto fail;
        counter = nnames++;
    }
    if (tn_fresh_name(r, name, (size_t)nnames, e, t->id) != 0)
        goto fail;
    int noamount = nnames++;

    int64_t max_cents = (int64_t)vat_task_int(t, "amount_max") * 100;
    int64_t big = vat_rng_range(r, max_cents / 2, max_cents);
    int64_t cap = big * 7 / 10;
    int64_t top[TN_MAX_N];
    for (int i = 0; i < n; i++)
        top[i] = big + vat_rng_range(r, big / 4, big + big / 2);
    qsort(top, (size_t)n, sizeof top[0], cmp_i64_desc);
    /* The N-th total and one cent less round alike to the dime and the
     * unit (no half cent between them), so only the cent tells them apart. */
    while (top[n - 1] % 10 == 5 || top[n - 1] % 10 == 6 || top[n - 1] % 100 == 50 ||
           top[n - 1] % 100 == 51)
        top[n - 1]--;
    /* Variants 1 and 3: the N-th total ends in 60 cents, so the tied
     * pair can be made of sales whose rounding is known (below). */
    if (k != 2)
        top[n - 1] -= top[n - 1] % 100 + 40;
    if (k >= 2 && n >= 2) {
        int j = (int)vat_rng_below(r, (uint32_t)(n - 1));
        top[j] = top[j + 1];
    }
    int64_t ptotal = top[n - 1];
    if (k == 2) {
        ptotal--;
        if (strcmp(name[partner], name[n - 1]) > 0) {
            char tmp[64];
            memcpy(tmp, name[partner], sizeof tmp);
            memcpy(name[partner], name[n - 1], sizeof tmp);
            memcpy(name[n - 1], tmp, sizeof tmp);
        }
    }

    struct tn_vbuild v = {0};
    long most = 0;
    /* The boundary tie of variants 1 and 3: the name's winner W ends one
     * sale in 60 cents, the loser L two in 30 (variant 3: the other way
     * round), the rest whole units; summed in whole cents they tie, but
     * amount * 99 rounded per sale puts L above W in variant 1 and
     * amount * 101 does in variant 3, so a sum scaled off the cent is
     * seen. */
    static const int64_t end_one[] = {60}, end_two[] = {30, 30};
    int winner = strcmp(name[n - 1], name[partner]) < 0 ? n - 1 : partner;
    for (int i = 0; i <= n; i++) {
        int64_t tot = i < n ? top[i] : ptotal;
        long m = (long)((tot + cap - 1) / cap) + (long)vat_rng_below(r, 2);
        size_t before = v.n;
        const int64_t *end = NULL;
        int ne = 0;
        if (k != 2 && (i == n - 1 || i == partner)) {
            bool one = (i == winner) == (k == 1);
            end = one ? end_one : end_two;
            ne = one ? 1 : 2;
        }
        tn_vsplit(r, &v, i, tot, m, cap, end, ne);
        if ((long)(v.n - before) > most)
            most = (long)(v.n - before);
    }
    /* The others below the (N+1)-th, the decoy's big sale above every
     * other sale. */
    for (int i = n + 1; i < decoy; i++) {
        if (i == counter)
            continue;
        size_t before = v.n;
        int64_t tot = vat_rng_range(r, 2 * TN_MIN_SALE, ptotal - 2);
        long m = 1 + (long)vat_rng_below(r, 3);
        tn_vsplit(r, &v, i, tot, m, cap, NULL, 0);
        if ((long)(v.n - before) > most)
            most = (long)(v.n - before);
    }
    long m = most + 3; /* the counter's sales */
    if ((int64_t)m * TN_MIN_SALE > ptotal - 2)
        m = (long)((ptotal - 2) / TN_MIN_SALE);
    int64_t ctot = vat_rng_range(r, (int64_t)m * TN_MIN_SALE, ptotal - 2);
    tn_vsplit(r, &v, counter, ctot, m, cap, NULL, 0);
    tn_vpush(&v, decoy, big);
    if (k == 3) {
        int64_t small = vat_rng_range(r, TN_MIN_SALE, big / 8);
        tn_vpush(&v, decoy, small);
    }
    for (long j = 0, q = 1 + (long)vat_rng_below(r, 2); j < q; j++)
        tn_vpush(&v, noamount, -1);
    tn_vpush(&v, 0, -1); /* a blank amount beside the rank-1 customer's sales */
    int64_t nobody = vat_rng_range(r, 100, big / 2);
    nobody += top[0];
    tn_vsplit(r, &v, -1, nobody, 0, cap, NULL, 0);
    vat_rng_shuffle(r, v.s, v.n, sizeof *v.s);

    tn_vcsv(r, t->side, &v, name, c);
    free(v.s);
    free(name);
    return 0;
fail:
    free(name);
    return -1;
}

static const struct vat_progform tn_progform = {
    .tables = tn_tables,
    .ntables = sizeof tn_tables / sizeof *tn_tables,
    .outs = tn_outs,
    .nouts = sizeof tn_outs / sizeof *tn_outs,
    .columns = tn_cols,
    .types = tn_types,
    .ncols = TN_NCOLS,
    .ordered = true,
    .kind = VAT_AN_LIST,
    .rel_tol = TN_TOL,
    .abs_tol = TN_TOL,
    .nvariants = 3,
    .question = tn_pf_question,
    .shape = tn_pf_shape,
    .gold_sql = tn_pf_gold,
    .trap_sql = tn_pf_trap,
    .variant = tn_pf_variant,
};

/* Copies (duplicates, test entries: three at least) are drawn from the
 * three largest sales of the first customer outside the top N whose three
 * largest sales outweigh its gap to the N-th, so counting them lifts that
 * customer into the list (no such customer: every sale of the first one
 * outside); text numbers go anywhere (skipping about half of every
 * customer's sales reorders them). */
struct tn_lift {
    const char *name;
    double sum;
    size_t top[3]; /* rows of its three largest sales, 0 for none */
    double amt[3];
};

static int tn_lift_cmp(const void *a, const void *b)
{
    const struct tn_lift *x = a, *y = b;
    if (x->sum != y->sum)
        return x->sum > y->sum ? -1 : 1;
    return strcmp(x->name, y->name);
}

static void tn_targets(const struct vat_task *t, const struct vat_csv *c, unsigned m, bool *is)
{
    size_t n = (size_t)json_integer_value(json_object_get(t->params, "n"));
    if (m == VAT_TM_TEXTNUM) {
        for (size_t i = 1; i < c->nrows; i++)
            is[i] = true;
        return;
    }
    struct tn_lift *rk = vat_xcalloc(c->nrows, sizeof *rk);
    size_t k = 0;
    for (size_t i = 1; i < c->nrows; i++) {
        const char *who = vat_csv_get(c, i, C_CUSTOMER);
        double x = 0;
        size_t j = 0;
        if (!who[0])
            continue; /* a sale without a customer belongs to nobody */
        while (j < k && strcmp(rk[j].name, who) != 0)
            j++;
        if (j == k)
            rk[k++].name = who;
        if (!vat_trapmod_number(vat_csv_get(c, i, C_AMOUNT), &x))
            continue;
        rk[j].sum += x;
        /* keep the three largest, largest first */
        for (int q = 0; q < 3; q++) {
            if (rk[j].top[q] && rk[j].amt[q] >= x)
                continue;
            for (int z = 2; z > q; z--) {
                rk[j].top[z] = rk[j].top[z - 1];
                rk[j].amt[z] = rk[j].amt[z - 1];
            }
            rk[j].top[q] = i;
            rk[j].amt[q] = x;
            break;
        }
    }
    qsort(rk, k, sizeof *rk, tn_lift_cmp);
    const struct tn_lift *pick = NULL;
    for (size_t r = n; n > 0 && r < k && !pick; r++) {
        double lift = rk[r].amt[0] + rk[r].amt[1] + rk[r].amt[2];
        if (rk[r].top[2] && rk[r].sum + lift > rk[n - 1].sum + 0.01)
            pick = &rk[r];
    }
    if (pick) {
        for (int q = 0; q < 3; q++)
            is[pick->top[q]] = true;
    } else {
        const char *first = n > 0 && n < k ? rk[n].name : NULL;
        for (size_t i = 1; i < c->nrows; i++)
            is[i] = !first || strcmp(vat_csv_get(c, i, C_CUSTOMER), first) == 0;
    }
    free(rk);
}

/* Sale ids are unique, amounts decimals. */
static const struct vat_trapmods tn_modules = {
    .duplicates = true, .amount = "amount", .id = "sale_id", .targets = tn_targets};

const struct vat_template vat_tmpl_top_n = {
    .version = VAT_TEMPLATE_V1,
    .name = "top_n",
    .family = "analytics",
    .answer_kind = "value",
    .trap = "Ranking customers by their largest single sale instead of their total amount.",
    .summary = "The N customers with the largest total sales amount, ties broken by name "
               "ascending, as an ordered list.",
    .params = tn_params,
    .default_count = 12,
    .generate = tn_generate,
    .reference = tn_reference,
    .confirm = tn_confirm,
    .trap_answer = tn_trap,
    .check = vat_check_task,
    .giveaways = tn_giveaways,
    .answer_columns = tn_answer_columns,
    .progform = &tn_progform,
    .conventions = tn_conventions,
    .defects = tn_defects,
    .modules = &tn_modules,
};
