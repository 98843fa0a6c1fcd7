/* grouped_sum.c — the grouped_sum analytics template: an orders CSV
 * (order_id, customer, region, status, amount, ordered_on) and the total
 * amount per region over the orders whose status is `paid`.  The trap is
 * dropping the status filter; every fixture holds a non-paid order, and
 * sometimes a region with no paid order at all, so the trap always differs.
 * Exports vat_tmpl_grouped_sum. */
#include <stdlib.h>
#include <string.h>

#include "analytics.h"
#include "anxl.h"
#include "csvio.h"
#include "prompt.h"
#include "progform.h"
#include "template.h"
#include "trapmod.h"
#include "values.h"

#define GS_MAX_REGIONS 8
#define GS_REL_TOL 1e-9
#define GS_ABS_TOL 1e-6

enum { C_ID, C_CUSTOMER, C_REGION, C_STATUS, C_AMOUNT, C_DATE, GS_NCOLS };
static const char *const gs_cols[GS_NCOLS] = {"order_id", "customer", "region",
                                              "status",   "amount",   "ordered_on"};
static const char gs_paid[] = "paid";

static const struct vat_param gs_params[] = {
    {.name = "rows_min", .type = VAT_PARAM_INT, .def = 20, .min = 5, .max = 2000,
     .doc = "fewest data rows in a fixture", .role = VAT_PARAM_ROWS},
    {.name = "rows_max", .type = VAT_PARAM_INT, .def = 120, .min = 5, .max = 2000,
     .doc = "most data rows in a fixture", .role = VAT_PARAM_ROWS},
    {.name = "regions_min", .type = VAT_PARAM_INT, .def = 3, .min = 2, .max = GS_MAX_REGIONS,
     .doc = "fewest distinct regions"},
    {.name = "regions_max", .type = VAT_PARAM_INT, .def = 6, .min = 2, .max = GS_MAX_REGIONS,
     .doc = "most distinct regions"},
    {.name = "statuses_max", .type = VAT_PARAM_INT, .def = 3, .min = 1, .max = 6,
     .doc = "most non-paid statuses drawn beside paid"},
    {.name = "paid_share", .type = VAT_PARAM_REAL, .def = 0.6, .min = 0.1, .max = 0.9,
     .doc = "chance that an order outside the unpaid region is paid"},
    {.name = "empty_region_chance", .type = VAT_PARAM_REAL, .def = 0.3, .min = 0, .max = 1,
     .doc = "chance that one region has only non-paid orders (left out of the answer)"},
    {.name = "amount_max", .type = VAT_PARAM_INT, .def = 2500, .min = 10, .max = 100000,
     .doc = "largest order amount, in whole currency units"},
    VAT_AXL_PARAMS,
    VAT_PROGFORM_PARAM,
    {0},
};

/* The workbook format: the orders table on sheet Orders.  Its own traps:
 * reading the other table, skipping amounts stored as text. */
static const enum vat_xl_kind gs_kind[GS_NCOLS] = {VAT_XLK_TEXT, VAT_XLK_TEXT, VAT_XLK_TEXT,
                                                   VAT_XLK_TEXT, VAT_XLK_MONEY, VAT_XLK_TEXT};
static const char *const gs_groups[GS_NCOLS] = {"Order", "Order", "Fulfilment",
                                                "Fulfilment", "Payment", "Payment"};
static const bool gs_total_of[GS_NCOLS] = {false, false, false, false, true, false};
static const char *const gs_titles[] = {"Orders, this quarter", "Orders, last quarter",
                                        "Orders, same quarter last year"};
static const struct vat_axl_desc gs_desc = {
    .sheet = "Orders", .what = "orders", .titles = gs_titles, .ntitles = 3, .kind = gs_kind,
    .group = gs_groups, .totals_col = C_ID, .total_of = gs_total_of,
    .traps = VAT_AXL_BIT(VAT_AXL_TWO_TABLES) | VAT_AXL_BIT(VAT_AXL_TEXT_NUMBERS),
    .decor = VAT_AXL_BIT(VAT_AXL_TITLE_NOTES) | VAT_AXL_BIT(VAT_AXL_GROUP_HEADER) |
             VAT_AXL_BIT(VAT_AXL_TOTALS) | VAT_AXL_BIT(VAT_AXL_TEXT_NUMBERS)};
/* The question in both styles.  Natural: "paid orders" fixes the status
 * filter by convention, and the answer lists the regions with paid orders
 * (stated, not warned about). */
static const char *const gs_q_natural[] = {
    "What did each region bring in from {paid}?",
    "How much revenue did each `region` book from {paid}?",
    "Could you total {paid} by region for me?",
    "Per region, what is the total value of {paid}?",
    "I need the [[revenue|sales total]] from {paid}, broken down by region.",
    "How much money came in per region from {paid}?",
    "[[For the regional review|For the board pack|For our sales meeting]], what do {paid} add "
    "up to in each region?",
};
static const char *const gs_c_natural[] = {
    "[[Only|Just]] {regions} [[need to appear|should be listed|go in the answer]].",
    "List {regions}[[, nothing else| only]].",
    "[[I only need|I'm after]] {regions}.",
    "The answer covers {regions}.",
};
/* The explicit question, ways of asking it; the rules that follow it are
 * the same in substance. */
static const char *const gs_q_explicit[] = {
    "[[Question: what|What]] is the total `amount` per `region` over the orders whose `status` "
    "is exactly `paid`?",
    "For each `region`, what do the `amount` values of the orders whose `status` is "
    "exactly `paid` add up to?",
    "Sum `amount` by `region` over the orders whose `status` is exactly `paid`: what is "
    "each region's total?",
    "Compute the total `amount` of every `region`, counting the orders whose `status` is "
    "exactly `paid`.",
    "What does each `region` total in `amount`, over the orders with `status` exactly `paid`?",
    "Give, per `region`, the sum of `amount` over the orders whose `status` is exactly `paid`.",
};
static const char *const gs_r_explicit[] = {
    "[[Orders with any other status are not counted|Any other status is not counted|An order "
    "of any other status is not counted]]. Include only regions that have at least one paid "
    "order; [[a region without any paid order is left out of the answer (not listed with "
    "0)|a region without one is left out, not listed with 0|a region with none is left out "
    "of the answer rather than listed with 0]]. [[Sum the amounts exactly|Sum exactly|Add up "
    "exactly]]: [[each total is a number with at most two decimals|a total has at most two "
    "decimals|every total carries two decimals at most]].",
};
/* Phrases the explicit prompt uses to name the trap (none in natural). */
/* The columns as the data description lists them, in each style. */
static const struct vat_prompt_col gs_cols_natural[] = {
    {"order_id", ""},
    {"customer", "[[|who ordered]]"},
    {"region", "[[sales region|the sales region|where it was sold]]"},
    {"status", "{statuses}"},
    {"amount", "[[order total, two decimals|the order total with two decimals|the total, two "
        "decimals]]"},
    {"ordered_on", "[[YYYY-MM-DD|the order date, YYYY-MM-DD|when it was placed, YYYY-MM-DD]]"},
};
static const struct vat_prompt_col gs_cols_explicit[] = {
    {"order_id", ""},
    {"customer", "[[|the customer's name]]"},
    {"region", "[[the sales region|the region of the sale]]"},
    {"status", "{statuses}"},
    {"amount", "[[the order total, a decimal with two places|the order total with two decimal "
        "places|the total of the order, two decimal places]]"},
    {"ordered_on", "[[the order date, YYYY-MM-DD|YYYY-MM-DD, the order date|the date of the order, "
        "YYYY-MM-DD]]"},
};
static const char *const gs_giveaways[] = {
    "exactly `paid`", "any other status", "not counted", "left out", "not listed with 0",
    "tolerance", "Sum the amounts exactly", NULL,
};
static const char *const gs_defects[] = {"unpaid orders count", "other statuses", NULL};
static const char *const gs_answer_columns[] = {"region", "status", "amount", NULL};
static const char *const gs_states_paid[] = {
    "paid orders", "the orders that were paid", "orders that got paid", NULL,
};
static const char *const gs_states_regions[] = {
    "regions that had paid orders", "the regions with paid orders",
    "regions with at least one paid order", NULL,
};
static const struct vat_convention gs_conventions[] = {
    {"status", gs_states_paid},
    {"regions_without_paid", gs_states_regions},
    {NULL, NULL},
};

/* The question and what decides it, in the task's style (both answer
 * forms). */
static void gs_say_question(struct vat_buf *b, struct vat_task *t)
{
    if (vat_prompt_natural(t)) {
        const char *kv[] = {"paid", vat_prompt_state(t, "status"), NULL};
        VAT_PROMPT_PUT(b, t, 'q', gs_q_natural, kv);
        vat_buf_putc(b, ' ');
        const char *ckv[] = {"regions", vat_prompt_state(t, "regions_without_paid"), NULL};
        VAT_PROMPT_PUT(b, t, 'c', gs_c_natural, ckv);
    } else {
        VAT_PROMPT_PUT(b, t, 'q', gs_q_explicit, NULL);
        vat_buf_putc(b, ' ');
        VAT_PROMPT_PUT(b, t, 'r', gs_r_explicit, NULL);
    }
}

/* What the generator planted, for confirm's cross-check. */
struct gs_priv {
    struct vat_an_tally paid; /* region -> paid cents, as drawn */
    const char *regions[GS_MAX_REGIONS]; /* the task's regions, for variants */
    int nreg;
};

static void gs_priv_free(void *p)
{
    struct gs_priv *g = p;
    vat_an_tally_release(&g->paid);
    free(g);
}

/* Statuses kept out of the non-paid vocabulary: "paid" itself, and
 * fulfilment states a reader could take to imply payment. */
static bool gs_ambiguous(const char *status)
{
    static const char *const skip[] = {"paid", "shipped", "delivered"};
    for (size_t i = 0; i < sizeof skip / sizeof skip[0]; i++)
        if (strcmp(status, skip[i]) == 0)
            return true;
    return false;
}

struct gs_row {
    int region;
    int status; /* 0 is paid; 1.. index the non-paid statuses */
    int64_t cents;
    int32_t day;
};

/* Customers: mostly "First Last"; sometimes "Last, First" as CRM exports
 * write it (a quoted field), sometimes a company. */
static const struct vat_customer_mix gs_customers = {.last_first = 1, .company = 1, .person = 8};

/* Draws the rows: one paid order in every region but the unpaid one, one
 * non-paid order in the unpaid region (if any) and one more non-paid order
 * somewhere, so the trap is armed; the rest at random. */
static struct gs_row *gs_draw_rows(struct vat_rng *r, size_t n, int nreg, int nstat, int empty,
                                   double paid_share, int64_t max_cents)
{
    struct gs_row *rows = vat_xcalloc(n, sizeof *rows);
    uint32_t weight[GS_MAX_REGIONS];
    for (int i = 0; i < nreg; i++)
        weight[i] = (uint32_t)vat_rng_range(r, 1, 4);
    size_t k = 0;
    for (int i = 0; i < nreg; i++, k++) {
        rows[k].region = i;
        rows[k].status = i == empty ? 1 + (int)vat_rng_below(r, (uint32_t)nstat) : 0;
    }
    rows[k].region = (int)vat_rng_below(r, (uint32_t)nreg);
    rows[k].status = 1 + (int)vat_rng_below(r, (uint32_t)nstat);
    k++;
    for (; k < n; k++) {
        int g = (int)vat_rng_weighted(r, weight, (size_t)nreg);
        rows[k].region = g;
        if (g != empty && vat_rng_chance(r, paid_share))
            rows[k].status = 0;
        else
            rows[k].status = 1 + (int)vat_rng_below(r, (uint32_t)nstat);
    }
    for (k = 0; k < n; k++) {
        /* Most orders are small, a few large: a realistic mix of totals. */
        int64_t hi = vat_rng_chance(r, 0.75) && max_cents > 30000 ? 30000 : max_cents;
        rows[k].cents = vat_gen_cents(r, 500, hi);
    }
    vat_rng_shuffle(r, rows, n, sizeof *rows);
    return rows;
}

/* "ORD-" and the id zero-padded to six digits, as "ORD-%06ld" writes it. */
static void add_order_id(struct vat_csv *c, long id)
{
    char oid[32] = "ORD-";
    vat_fmt_int(id, 6, oid + 4);
    vat_csv_add(c, oid);
}

/* The statuses of this task after status[0] ("paid"): up to seven others
 * of the word list, none ambiguous, into status[1..].  How many, or -1
 * when the list has none. */
static int gs_statuses(struct vat_rng *r, long smax, const char *status[8])
{
    size_t nw = 0;
    const char *const *words = vat_words("status", &nw);
    const char **pool = vat_xcalloc(nw + 1, sizeof *pool);
    size_t npool = 0;
    for (size_t i = 0; words && i < nw; i++)
        if (!gs_ambiguous(words[i]))
            pool[npool++] = words[i];
    if (npool == 0) {
        free(pool);
        return -1;
    }
    vat_rng_shuffle(r, pool, npool, sizeof *pool);
    long shi = smax < (long)npool ? smax : (long)npool;
    int nstat = (int)vat_rng_range(r, 1, shi < 7 ? shi : 7);
    for (int i = 0; i < nstat; i++)
        status[1 + i] = pool[i];
    free(pool);
    return nstat;
}

static int gs_generate(struct vat_task *t, struct vat_rng *r, struct vat_err *e)
{
    long rmin = vat_task_int(t, "rows_min"), rmax = vat_task_int(t, "rows_max");
    long gmin = vat_task_int(t, "regions_min"), gmax = vat_task_int(t, "regions_max");
    long smax = vat_task_int(t, "statuses_max");
    double paid_share = vat_task_real(t, "paid_share");
    double empty_chance = vat_task_real(t, "empty_region_chance");
    int64_t max_cents = (int64_t)vat_task_int(t, "amount_max") * 100;
    struct vat_axl_state st;
    if (vat_axl_begin(t, &gs_desc, &st, e) != 0)
        return -1;

    /* Regions and the status vocabulary of this task. */
    const char *regions[GS_MAX_REGIONS];
    long want = vat_rng_range(r, gmin, gmax);
    if (want > GS_MAX_REGIONS)
        want = GS_MAX_REGIONS;
    int nreg = (int)vat_gen_distinct(r, "region", regions, (size_t)want);
    if (nreg < 2)
        return vat_err_set(e, "%s: the 'region' word list has fewer than 2 entries", t->id);

    const char *status[8] = {gs_paid};
    int nstat = gs_statuses(r, smax, status);
    if (nstat < 0)
        return vat_err_set(e, "%s: the 'status' word list has no status besides 'paid'", t->id);

    long nl = vat_rng_range(r, rmin, rmax);
    size_t n = nl < nreg + 2 ? (size_t)nreg + 2 : (size_t)nl;
    int empty = vat_rng_chance(r, empty_chance) ? (int)vat_rng_below(r, (uint32_t)nreg) : -1;
    struct gs_row *rows = gs_draw_rows(r, n, nreg, nstat, empty, paid_share, max_cents);

    /* Dates ascend with the order ids, as an export sorted by id would. */
    int32_t start = vat_date_from_civil(2022, 1, 1) + (int32_t)vat_rng_range(r, 0, 1000);
    int32_t span = (int32_t)vat_rng_range(r, 20, 120);
    int32_t *days = vat_gen_days_sorted(r, n, start, start + span);

    /* Customers repeat, as real customers do. */
    size_t ncust = n / 3 + 3;
    char (*cust)[64] = vat_xcalloc(ncust, sizeof *cust);
    for (size_t i = 0; i < ncust; i++)
        vat_gen_customer(r, &gs_customers, cust[i], sizeof cust[i]);

    struct vat_csv c = VAT_CSV_INIT;
    vat_csv_add_row(&c, gs_cols, GS_NCOLS);
    long id = (long)vat_rng_range(r, 100000, 500000);
    struct gs_priv *pv = vat_xcalloc(1, sizeof *pv);
    memcpy(pv->regions, regions, sizeof regions);
    pv->nreg = nreg;
    bool seen[8] = {false};
    char money[32], date[11];
    for (size_t i = 0; i < n; i++) {
        id += (long)vat_rng_range(r, 1, 4);
        id = vat_side_next_id(t->side, "ORD-", 6, id);
        vat_csv_row_begin(&c);
        add_order_id(&c, id);
        vat_csv_add(&c, cust[vat_rng_below(r, (uint32_t)ncust)]);
        vat_csv_add(&c, regions[rows[i].region]);
        vat_csv_add(&c, status[rows[i].status]);
        vat_csv_add(&c, vat_fmt_cents(rows[i].cents, money, sizeof money));
        vat_csv_add(&c, vat_fmt_date(days[i], date));
        seen[rows[i].status] = true;
        if (rows[i].status == 0)
            vat_an_tally_add(&pv->paid, regions[rows[i].region], rows[i].cents);
    }
    free(cust);
    free(days);
    free(rows);
    t->priv = pv;
    t->priv_free = gs_priv_free;

    if (vat_axl_write(t, &st, &c, &gs_desc, e) < 0) {
        vat_csv_release(&c);
        return -1;
    }

    /* The statuses the file holds, in byte order, for the prompt. */
    const char *shown[8];
    int nshown = 0;
    for (int i = 0; i <= nstat; i++)
        if (seen[i])
            shown[nshown++] = status[i];

    struct vat_buf wl = VAT_BUF_INIT, b = VAT_BUF_INIT;
    vat_an_prompt_words(&wl, shown, (size_t)nshown);
    bool nat = vat_prompt_natural(t);
    struct vat_buf cols = VAT_BUF_INIT;
    const char *ckv[] = {"statuses", wl.data, NULL};
    vat_prompt_cols(&cols, t, nat ? gs_cols_natural : gs_cols_explicit,
                    VAT_N_OF(gs_cols_natural), ckv);
    const char *kv[] = {
        "topic", "[[our online shop's orders|the regional sales figures|this quarter's orders]]",
        "what", nat ? "[[our online shop's order export|the orders from our web shop{#pl}|an "
                      "export of our shop's orders|our shop's orders{#pl}]]"
                    : "[[an export of customer orders from an online shop|the orders of an "
                      "online shop{#pl}|an online shop's order export]]",
        "unit", "order", "statuses", wl.data,
        "cols", cols.data,
        NULL,
    };
    vat_prompt_open(&b, t, kv);
    vat_prompt_data(&b, t, kv);
    vat_buf_release(&cols);
    vat_buf_puts(&b, "\n\n");
    gs_say_question(&b, t);
    vat_buf_puts(&b, "\n\n");
    if (nat) {
        vat_prompt_answer(&b, t, "[[a JSON object mapping each region, spelled as in `region`, "
                                 "to its total as a number|a JSON object from each region (as "
                                 "written in `region`) to its total, a number]], [[like|for "
                                 "example|e.g.]] "
                                 "{\"<region>\": <total>}");
    } else {
        vat_prompt_answer(&b, t, "[[an object whose keys are the region names spelled exactly "
                                 "as in the `region` column and whose values are the totals as "
                                 "JSON numbers|an object mapping each region name, spelled "
                                 "exactly as in the `region` column, to its total as a JSON "
                                 "number]], [[for example|like]] {\"<region>\": <total>, "
                                 "\"<other region>\": <total>}. [[Key order does not matter|The "
                                 "order of the keys does not matter|Keys may come in any "
                                 "order]]");
        vat_buf_putc(&b, ' ');
        vat_prompt_tolerance(&b, t, GS_REL_TOL, GS_ABS_TOL);
    }
    vat_buf_puts(&b, "\n\n");
    vat_buf_release(&wl);
    vat_axl_prompt(&b, t, &st, 0, &c, &gs_desc);
    t->prompt = vat_buf_detach(&b);
    vat_csv_release(&c);

    json_t *sts = json_array();
    for (int i = 0; i < nshown; i++)
        json_array_append_new(sts, json_string(shown[i]));
    t->params = json_pack("{s:s, s:s, s:s, s:s, s:o}", "status", gs_paid, "group_by", "region",
                          "sum_of", "amount", "regions_without_paid", "omitted", "statuses", sts);
    vat_axl_finish(t, &st);


    struct vat_an_spec s = {.shape = "object", .rel_tol = GS_REL_TOL, .abs_tol = GS_ABS_TOL};
    t->spec = vat_an_value_spec(&s);
    return 0;
}

/* Sums amount per region over the rows read back from the fixture; with
 * only_paid the status filter applies (gold), without it not (the trap).
 * misread reads a workbook as its layout's trap does (the other table,
 * text amounts skipped as blanks). */
static json_t *gs_sum_file(const struct vat_task *t, bool only_paid, bool misread,
                           struct vat_err *e)
{
    struct vat_csv c = VAT_CSV_INIT;
    if (vat_axl_read(t, 0, gs_cols, GS_NCOLS, &gs_desc, misread, &c, e) != 0)
        return NULL;
    struct vat_an_tally sums = VAT_AN_TALLY_INIT;
    for (size_t i = 1; i < c.nrows; i++) {
        if (only_paid && strcmp(vat_csv_get(&c, i, C_STATUS), gs_paid) != 0)
            continue;
        if (misread && !*vat_csv_get(&c, i, C_AMOUNT))
            continue;
        int64_t cents;
        if (vat_an_csv_cents(t, 0, &c, i, C_AMOUNT, &cents, e) != 0) {
            vat_an_tally_release(&sums);
            vat_csv_release(&c);
            return NULL;
        }
        vat_an_tally_add(&sums, vat_csv_get(&c, i, C_REGION), cents);
    }
    json_t *o = vat_an_tally_cents_json(&sums);
    vat_an_tally_release(&sums);
    vat_csv_release(&c);
    return o;
}

static int gs_reference(struct vat_task *t, struct vat_err *e)
{
    return vat_an_gold_from(t, gs_sum_file(t, true, false, e), "the fixture has no paid order", e);
}

/* SQL over the CSV loaded into SQLite: sums integer cents, so the totals
 * are exact and must equal gold bit for bit; then, when the generator's
 * planted totals are at hand, those too. */
static int gs_confirm(const struct vat_task *t, struct vat_err *e)
{
    static const char *const types[GS_NCOLS] = {"TEXT", "TEXT", "TEXT", "TEXT", "REAL", "TEXT"};
    static const struct vat_an_query q = {
        .table = "orders", .types = types, .kind = VAT_AN_OBJECT,
        .sql = "SELECT region, SUM(CAST(round(amount * 100) AS INTEGER)) / 100.0 "
               "FROM orders WHERE status = 'paid' GROUP BY region ORDER BY region"};
    int rc = vat_axl_confirm_query(t, &q, gs_cols, GS_NCOLS, 0, 0, e);
    /* planted refunds (sign_convention) take off what the generator
     * planted; the SQL derivation above still stands */
    if (rc != 0 || !t->priv || (t->trapmods & VAT_TM_SIGN))
        return rc;
    struct gs_priv *pv = t->priv;
    return vat_an_confirm_value(t, vat_an_tally_cents_json(&pv->paid),
                                "the generator's planted totals", 0, 0, e);
}

static int gs_trap(struct vat_task *t, struct vat_err *e)
{
    if (vat_axl_trap(t) != VAT_AXL_OWN)
        return vat_an_trap_from(t, gs_sum_file(t, true, true, e));
    return vat_an_trap_from(t, gs_sum_file(t, false, false, e));
}

/* ---- the program form ------------------------------------------------------ */

static const char *const gs_types[GS_NCOLS] = {"TEXT", "TEXT", "TEXT", "TEXT", "REAL", "TEXT"};

static char *gs_pf_question(struct vat_task *t)
{
    struct vat_buf b = VAT_BUF_INIT;
    gs_say_question(&b, t);
    return vat_buf_detach(&b);
}

static char *gs_pf_shape(struct vat_task *t, const struct vat_pf_names *n)
{
    const char *kv[] = {"out", n->out, "dir", n->descending ? "descending" : "ascending", NULL};
    if (vat_prompt_natural(t))
        return vat_prompt_text(
            t, 's',
            "[[Return|It should return|I'd like]] two columns, `region` (as stored) and "
            "`{out}` ([[the region's total|its total]]), one row per region, [[ordered|sorted]] "
            "by `region` {dir}.",
            kv);
    return vat_prompt_text(
        t, 's',
        "[[It must return|The result must have|Return]] exactly two columns, `region` (as "
        "stored) and `{out}` (the region's sum of `amount`, a number), one row per region that "
        "has at least one paid order and no other rows, [[ordered|sorted]] by `region` {dir} "
        "(SQLite's default text order).",
        kv);
}

static char *gs_pf_query(const struct vat_pf_names *n, bool paid_only)
{
    return vat_xasprintf("SELECT region, SUM(amount) AS %s\nFROM %s\n%sGROUP BY region\n"
                         "ORDER BY region%s",
                         n->out, n->table, paid_only ? "WHERE status = 'paid'\n" : "",
                         n->descending ? " DESC" : "");
}

static char *gs_pf_gold(const struct vat_task *t, const struct vat_pf_names *n)
{
    (void)t;
    return gs_pf_query(n, true);
}

/* The named mistake: the status filter dropped. */
static char *gs_pf_trap(const struct vat_task *t, const struct vat_pf_names *n)
{
    (void)t;
    return gs_pf_query(n, false);
}

/* Variant k: the task's regions with new rows.  Every variant has a
 * region with only non-paid orders (a group with no qualifying row), a
 * region with several paid orders (a sum, not one value), non-paid
 * statuses sorting before and after 'paid' and a blank status (a filter
 * written as a comparison, or negated, lets one in), non-paid orders with
 * amounts (the trap counts them) and blank amounts and customers on
 * non-paid orders; variant 1 has a paid order of 0.00, variant 2 one of
 * 0.01 and one of the largest amount (boundary values). */
static int gs_pf_variant(const struct vat_task *t, struct vat_rng *r, int k, struct vat_csv *c,
                         struct vat_err *e)
{
    const struct gs_priv *pv = t->priv;
    if (!pv || pv->nreg < 2)
        return vat_err_set(e, "%s: variants need the generator's regions", t->id);
    static const char *const before[] = {"cancelled", "declined", "expired", "on_hold"};
    static const char *const after[] = {"pending", "refunded", "returned", "void"};
    /* one draw per statement: an initializer list's order is unspecified */
    const char *st[3] = {NULL, NULL, ""};
    st[0] = VAT_PICK(r, before);
    st[1] = VAT_PICK(r, after);
    int nreg = pv->nreg;
    int empty = (int)vat_rng_below(r, (uint32_t)nreg);
    int many = (empty + 1 + (int)vat_rng_below(r, (uint32_t)(nreg - 1))) % nreg;
    int64_t max_cents = (int64_t)vat_task_int(t, "amount_max") * 100;
    vat_csv_add_row(c, gs_cols, GS_NCOLS);
    long id = (long)vat_rng_range(r, 100000, 500000);
    int32_t day = vat_date_from_civil(2022, 1, 1) + (int32_t)vat_rng_range(r, 0, 1000);
    char money[32], date[11], cust[64];
    size_t n = (size_t)nreg * 3 + 6;
    for (size_t i = 0; i < n; i++) {
        int g, status; /* status: 0 paid, 1..3 st[] */
        if (i < (size_t)nreg) {
            g = (int)i;
            status = g == empty ? 1 + (int)vat_rng_below(r, 3) : 0;
        } else if (i < (size_t)nreg + 2) {
            g = many;
            status = 0;
        } else if (i < (size_t)nreg + 5) {
            g = many;
            status = 1 + (int)(i - (size_t)nreg - 2); /* before, after, blank */
        } else {
            g = (int)vat_rng_below(r, (uint32_t)nreg);
            status = g == empty || vat_rng_chance(r, 0.4) ? 1 + (int)vat_rng_below(r, 3) : 0;
        }
        int64_t cents = vat_gen_cents(r, 500, max_cents > 30000 ? 30000 : max_cents);
        if (status == 0 && i == 0 && k == 1)
            cents = 0;
        if (status == 0 && i == 0 && k == 2)
            cents = 1;
        if (status == 0 && i == 1 && k == 2)
            cents = max_cents;
        bool blank_amount = status != 0 && i >= (size_t)nreg + 5 && vat_rng_chance(r, 0.5);
        bool blank_cust = status != 0 && vat_rng_chance(r, 0.3);
        id += (long)vat_rng_range(r, 1, 4);
        id = vat_side_next_id(t->side, "ORD-", 6, id);
        day += (int32_t)vat_rng_below(r, 2);
        vat_gen_customer(r, &gs_customers, cust, sizeof cust);
        vat_csv_row_begin(c);
        add_order_id(c, id);
        vat_csv_add(c, blank_cust ? "" : cust);
        vat_csv_add(c, pv->regions[g]);
        vat_csv_add(c, status == 0 ? gs_paid : st[status - 1]);
        vat_csv_add(c, blank_amount ? "" : vat_fmt_cents(cents, money, sizeof money));
        vat_csv_add(c, vat_fmt_date(day, date));
    }
    return 0;
}

static const char *const gs_tables[] = {"orders", "customer_orders", "order_export", "sales_orders",
                                        "orders_csv"};
static const char *const gs_outs[] = {"total", "paid_total", "total_amount", "paid_amount",
                                      "revenue"};

static const struct vat_progform gs_progform = {
    .tables = gs_tables,
    .ntables = sizeof gs_tables / sizeof *gs_tables,
    .outs = gs_outs,
    .nouts = sizeof gs_outs / sizeof *gs_outs,
    .columns = gs_cols,
    .types = gs_types,
    .ncols = GS_NCOLS,
    .ordered = true,
    .kind = VAT_AN_OBJECT,
    .rel_tol = GS_REL_TOL,
    .abs_tol = GS_ABS_TOL,
    .nvariants = 3,
    .question = gs_pf_question,
    .shape = gs_pf_shape,
    .gold_sql = gs_pf_gold,
    .trap_sql = gs_pf_trap,
    .variant = gs_pf_variant,
};

/* Order ids are unique, statuses lower case, amounts decimals. */
static const struct vat_trapmods gs_modules = {
    .duplicates = true,
    .status = "status",
    .amount = "amount",
    .status_value = "paid",
    .id = "order_id",
    .lookalike = "list_amount",
    .lookalike_is = "the list price before discounts",
    .late = true,
    .sign = true};

const struct vat_template vat_tmpl_grouped_sum = {
    .version = VAT_TEMPLATE_V1,
    .name = "grouped_sum",
    .family = "analytics",
    .answer_kind = "value",
    .trap = "Summing every order per region, dropping the status = 'paid' filter.",
    .summary = "Total order amount per region over the orders whose status is paid.",
    .params = gs_params,
    .default_count = 12,
    .generate = gs_generate,
    .reference = gs_reference,
    .confirm = gs_confirm,
    .trap_answer = gs_trap,
    .check = vat_check_task,
    .giveaways = gs_giveaways,
    .answer_columns = gs_answer_columns,
    .progform = &gs_progform,
    .conventions = gs_conventions,
    .defects = gs_defects,
    .modules = &gs_modules,
};
