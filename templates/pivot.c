/* pivot.c — the pivot analytics template: a shipments CSV (shipment_id,
 * month, carrier, origin, destination, parcels, weight_kg) and the number
 * of shipments per month and carrier, laid out as a full grid: every month
 * that appears in the file crossed with every carrier that appears in it,
 * 0 where a combination has no shipment.  The trap omits the zero cells;
 * every fixture holds at least one empty combination (and sometimes a
 * calendar month with no shipment at all, which is not part of the grid),
 * so the trap always misses a key.  Exports vat_tmpl_pivot. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analytics.h"
#include "anxl.h"
#include "csvio.h"
#include "progform.h"
#include "prompt.h"
#include "template.h"
#include "trapmod.h"
#include "values.h"

#define PV_MAX_MONTHS 12
#define PV_MAX_CARRIERS 8
#define PV_REL_TOL 1e-9
#define PV_ABS_TOL 1e-9

enum { C_ID, C_MONTH, C_CARRIER, C_ORIGIN, C_DEST, C_PARCELS, C_WEIGHT, PV_NCOLS };
static const char *const pv_cols[PV_NCOLS] = {"shipment_id", "month",   "carrier",  "origin",
                                              "destination", "parcels", "weight_kg"};

/* The question in both styles.  Natural: a month-by-carrier grid, as a
 * pivot table in any spreadsheet lays it out, every carrier in every
 * month of the log, 0 where there were none: conventions stated. */
static const char *const pv_q_natural[] = {
    "Could you pivot the shipments by month and carrier for me?",
    "How many shipments went out each month with each `carrier`? I'd like it as a month by "
    "carrier grid.",
    "Please give me the monthly shipment counts per carrier, as a pivot table.",
    "I need a month x carrier table of shipment counts.",
    "[[For the carrier review|For our logistics meeting|For the freight invoice check]], how "
    "many shipments did each carrier take each month?",
    "Can you count our shipments per carrier and month?",
};
static const char *const pv_c_natural[] = {
    "[[Show|Include]] every carrier in every month, {zero}, for {months}.",
    "The grid covers {months}, with every carrier in each, {zero}.",
    "[[I want|Give me]] {months}, each with all carriers listed, {zero}.",
    "Every carrier [[appears|should appear]] in every month, {zero}; [[cover|the grid covers]] "
    "{months}.",
};
/* The explicit question, ways of asking it; the rules that follow it are
 * the same. */
static const char *const pv_q_explicit[] = {
    "[[Question: how|How]] many shipments are there per month and carrier?",
    "Count the shipments by month and by carrier: what is each count?",
    "For every month and every carrier, how many shipments are in the file?",
    "Compute a table of shipment counts, months by carriers.",
    "What is the number of shipments of each carrier in each month?",
};
static const char *const pv_r_explicit[] = {
    "[[Count rows: each row is one shipment, whatever its parcels or weight|Each row is one "
    "shipment, whatever its parcels or weight: count rows|Count rows, one shipment per row "
    "whatever its parcels or weight]]. [[Lay the counts out as a full table|The table is "
    "full|Give the counts as a full table]]: [[one entry for every month that appears in the "
    "`month` column|an entry for each month found in the `month` column|every month seen in "
    "`month` gets an entry]], and [[within each month one entry for every carrier that appears "
    "anywhere in the `carrier` column|inside each month, an entry for every carrier that "
    "appears anywhere in the file|each month holds every carrier that appears in any row]]. "
    "[[A month and carrier combination|A combination|A month and carrier pair]] with no "
    "shipment [[must still be listed|is still listed|still gets its entry]], with the count 0. "
    "[[A calendar month that does not appear in the file at all is not listed|A month that "
    "does not appear in the file at all is not listed]].",
};
/* The columns as the data description lists them, in each style. */
static const struct vat_prompt_col pv_cols_natural[] = {
    {"shipment_id", ""},
    {"month", "[[the month it left|when it left|the month of departure]], YYYY-MM"},
    {"carrier", "[[|who carried it]]"},
    {"origin", ""},
    {"destination", ""},
    {"parcels", "[[|how many parcels]]"},
    {"weight_kg", "[[|the weight in kilograms]]"},
};
static const struct vat_prompt_col pv_cols_explicit[] = {
    {"shipment_id", ""},
    {"month", "[[the month the shipment left, written YYYY-MM|the month of departure, "
        "YYYY-MM|YYYY-MM, the month it left]]"},
    {"carrier", "[[the company that carried it|the carrier company|the company carrying it]]"},
    {"origin", ""},
    {"destination", ""},
    {"parcels", "[[|the number of parcels]]"},
    {"weight_kg", "[[|the total weight in kilograms]]"},
};
static const char *const pv_giveaways[] = {
    "count 0", "must still be listed", "no shipment", "Count rows", "whatever its parcels",
    "not listed", "tolerance", NULL,
};
/* The empty cells' trap, which a natural prompt never describes. */
static const char *const pv_defects[] = {
    "missing combination", "gaps", "empty cells", "left out", "skip", NULL,
};
static const char *const pv_answer_columns[] = {"month", "carrier", NULL};
static const char *const pv_states_zero[] = {
    "0 where there were none", "with 0 where a carrier shipped nothing that month",
    "showing 0 for a month in which a carrier shipped nothing", NULL,
};
static const char *const pv_states_months[] = {
    "the months in the log", "every month that appears in the log",
    "the months the log covers", NULL,
};
static const struct vat_convention pv_conventions[] = {
    {"empty_combinations", pv_states_zero},
    {"months_not_in_file", pv_states_months},
    {NULL, NULL},
};

/* The question and what decides it, in the task's style (both answer
 * forms). */
static void pv_say_question(struct vat_buf *b, struct vat_task *t)
{
    if (vat_prompt_natural(t)) {
        VAT_PROMPT_PUT(b, t, 'q', pv_q_natural, NULL);
        vat_buf_putc(b, ' ');
        /* one draw per statement: an initializer list's order is unspecified */
        const char *zero = vat_prompt_state(t, "empty_combinations");
        const char *months = vat_prompt_state(t, "months_not_in_file");
        const char *kv[] = {"zero", zero, "months", months, NULL};
        VAT_PROMPT_PUT(b, t, 'c', pv_c_natural, kv);
    } else {
        VAT_PROMPT_PUT(b, t, 'q', pv_q_explicit, NULL);
        vat_buf_putc(b, ' ');
        VAT_PROMPT_PUT(b, t, 'r', pv_r_explicit, NULL);
    }
}

static const struct vat_param pv_params[] = {
    {.name = "rows_min", .type = VAT_PARAM_INT, .def = 20, .min = 5, .max = 2000,
     .doc = "fewest data rows in a fixture", .role = VAT_PARAM_ROWS},
    {.name = "rows_max", .type = VAT_PARAM_INT, .def = 150, .min = 5, .max = 2000,
     .doc = "most data rows in a fixture", .role = VAT_PARAM_ROWS},
    {.name = "months_min", .type = VAT_PARAM_INT, .def = 3, .min = 2, .max = PV_MAX_MONTHS,
     .doc = "fewest distinct months"},
    {.name = "months_max", .type = VAT_PARAM_INT, .def = 6, .min = 2, .max = PV_MAX_MONTHS,
     .doc = "most distinct months"},
    {.name = "carriers_min", .type = VAT_PARAM_INT, .def = 3, .min = 2, .max = PV_MAX_CARRIERS,
     .doc = "fewest distinct carriers"},
    {.name = "carriers_max", .type = VAT_PARAM_INT, .def = 5, .min = 2, .max = PV_MAX_CARRIERS,
     .doc = "most distinct carriers"},
    {.name = "empty_share", .type = VAT_PARAM_REAL, .def = 0.15, .min = 0, .max = 0.6,
     .doc = "chance that a month x carrier cell beyond the one planted is empty"},
    {.name = "gap_month_chance", .type = VAT_PARAM_REAL, .def = 0.25, .min = 0, .max = 1,
     .doc = "chance that one calendar month inside the span has no shipment at all"},
    VAT_AXL_PARAMS,
    VAT_PROGFORM_PARAM,
    {0},
};

/* The workbook format: the shipping log on sheet Shipments.  Layout
 * traps: counting the totals row (its "Total" sits in the month column,
 * as a pivot export writes it) as a shipment, reading the other table. */
static const enum vat_xl_kind pv_kind[PV_NCOLS] = {VAT_XLK_TEXT, VAT_XLK_TEXT, VAT_XLK_TEXT,
                                                   VAT_XLK_TEXT, VAT_XLK_TEXT, VAT_XLK_INT,
                                                   VAT_XLK_MONEY};
static const char *const pv_groups[PV_NCOLS] = {"Shipment", "Shipment", "Shipment", "Route",
                                                "Route",    "Load",     "Load"};
static const bool pv_total_of[PV_NCOLS] = {false, false, false, false, false, true, true};
static const char *const pv_titles[] = {"Shipments, main depot", "Shipments, overflow depot",
                                        "Shipments, returns desk"};
static const struct vat_axl_desc pv_desc = {
    .sheet = "Shipments", .what = "shipments", .titles = pv_titles, .ntitles = 3,
    .kind = pv_kind, .group = pv_groups, .totals_col = C_MONTH, .total_of = pv_total_of,
    .traps = VAT_AXL_BIT(VAT_AXL_TOTALS) | VAT_AXL_BIT(VAT_AXL_TWO_TABLES),
    .decor = VAT_AXL_BIT(VAT_AXL_TITLE_NOTES) | VAT_AXL_BIT(VAT_AXL_GROUP_HEADER) |
             VAT_AXL_BIT(VAT_AXL_TEXT_NUMBERS) | VAT_AXL_BIT(VAT_AXL_TOTALS)};

/* What the generator planted, for confirm's cross-check: the grid of
 * counts over the months and carriers in the file (both sorted). */
struct pv_priv {
    int nm, nc;
    char month[PV_MAX_MONTHS][16];
    char carrier[PV_MAX_CARRIERS][32];
    long count[PV_MAX_MONTHS][PV_MAX_CARRIERS];
};

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Marks the empty cells: (i0, j0) always, others at `share`; then gives
 * back a cell to any month or carrier left with none, never (i0, j0), so
 * every month and carrier still appears in the file. */
static void pv_draw_empty(struct vat_rng *r, bool empty[PV_MAX_MONTHS][PV_MAX_CARRIERS], int nm,
                          int nc, double share)
{
    int i0 = (int)vat_rng_below(r, (uint32_t)nm), j0 = (int)vat_rng_below(r, (uint32_t)nc);
    for (int i = 0; i < nm; i++)
        for (int j = 0; j < nc; j++)
            empty[i][j] = (i == i0 && j == j0) || vat_rng_chance(r, share);
    for (int i = 0; i < nm; i++) {
        int full = 0;
        for (int j = 0; j < nc; j++)
            full += !empty[i][j];
        if (full == 0) {
            int j = (int)vat_rng_below(r, (uint32_t)nc);
            if (i == i0 && j == j0)
                j = (j + 1) % nc;
            empty[i][j] = false;
        }
    }
    for (int j = 0; j < nc; j++) {
        int full = 0;
        for (int i = 0; i < nm; i++)
            full += !empty[i][j];
        if (full == 0) {
            int i = (int)vat_rng_below(r, (uint32_t)nm);
            if (i == i0 && j == j0)
                i = (i + 1) % nm;
            empty[i][j] = false;
        }
    }
}

struct pv_row {
    int month, carrier;
    uint32_t key; /* random order within a month */
};

static int pv_row_cmp(const void *a, const void *b)
{
    const struct pv_row *x = a, *y = b;
    /* a total order, so the layout does not depend on the libc's qsort */
    if (x->month != y->month)
        return (x->month > y->month) - (x->month < y->month);
    if (x->key != y->key)
        return (x->key > y->key) - (x->key < y->key);
    return (x->carrier > y->carrier) - (x->carrier < y->carrier);
}

/* The n shipments of an nm x nc grid: one in every cell not empty, the
 * rest weighted (carriers differ in volume, months a little), sorted as
 * the export numbers them (between rmin and rmax, at least nfull: *n_out).
 * A new array. */
static struct pv_row *pv_rows(struct vat_rng *r, bool empty[][PV_MAX_CARRIERS], int nm, int nc,
                              long rmin, long rmax, int nfull, size_t *n_out)
{
    /* Carriers differ in volume, months a little; cell i * nc + j weighs
     * month i's weight times carrier j's, or 0 when it is empty. */
    uint32_t wm[PV_MAX_MONTHS], wc[PV_MAX_CARRIERS], wcell[PV_MAX_MONTHS * PV_MAX_CARRIERS];
    for (int i = 0; i < nm; i++)
        wm[i] = (uint32_t)vat_rng_range(r, 2, 4);
    for (int j = 0; j < nc; j++)
        wc[j] = (uint32_t)vat_rng_range(r, 1, 6);
    for (int i = 0; i < nm; i++)
        for (int j = 0; j < nc; j++)
            wcell[i * nc + j] = empty[i][j] ? 0 : wm[i] * wc[j];

    long nl = vat_rng_range(r, rmin, rmax);
    size_t n = nl < nfull ? (size_t)nfull : (size_t)nl;
    struct pv_row *rows = vat_xcalloc(n, sizeof *rows);
    size_t k = 0;
    for (int i = 0; i < nm; i++)
        for (int j = 0; j < nc; j++)
            if (!empty[i][j])
                rows[k].month = i, rows[k].carrier = j, k++;
    for (; k < n; k++) {
        int g = (int)vat_rng_weighted(r, wcell, (size_t)(nm * nc));
        rows[k].month = g / nc;
        rows[k].carrier = g % nc;
    }
    for (k = 0; k < n; k++)
        rows[k].key = vat_rng_u32(r);
    /* Shipment ids ascend with the month, as an export sorted by id would. */
    qsort(rows, n, sizeof *rows, pv_row_cmp);
    *n_out = n;
    return rows;
}

/* The log's rows into c (ids side owns), counting each month and carrier
 * into pv. */
static void pv_csv(struct vat_rng *r, int side, const struct pv_row *rows, size_t n,
                   struct pv_priv *pv,
                   char months[][16], const char *const *carriers, const char *const *hubs,
                   size_t nhub, const char *const *cities, size_t ncity, struct vat_csv *c)
{
    vat_csv_add_row(c, pv_cols, PV_NCOLS);
    long id = (long)vat_rng_range(r, 2000000, 7000000);
    for (size_t k = 0; k < n; k++) {
        const struct pv_row *x = &rows[k];
        pv->count[x->month][x->carrier]++;
        id += (long)vat_rng_range(r, 1, 9);
        id = vat_side_next_id(side, "SHP-", 7, id);
        const char *from = hubs[vat_rng_below(r, (uint32_t)nhub)];
        const char *to = cities[vat_rng_below(r, (uint32_t)ncity)];
        while (strcmp(to, from) == 0)
            to = cities[vat_rng_below(r, (uint32_t)ncity)];
        long parcels = vat_rng_chance(r, 0.6) ? 1 : (long)vat_rng_range(r, 2, 14);
        long grams = parcels * (long)vat_rng_range(r, 300, 18000);
        vat_csv_row_begin(c);
        vat_csv_addf(c, "SHP-%07ld", id);
        vat_csv_add(c, months[x->month]);
        vat_csv_add(c, carriers[x->carrier]);
        vat_csv_add(c, from);
        vat_csv_add(c, to);
        vat_csv_addf(c, "%ld", parcels);
        vat_csv_addf(c, "%ld.%ld", grams / 1000, grams % 1000 / 100);
    }
}

static int pv_generate(struct vat_task *t, struct vat_rng *r, struct vat_err *e)
{
    long rmin = vat_task_int(t, "rows_min"), rmax = vat_task_int(t, "rows_max");
    long mmin = vat_task_int(t, "months_min"), mmax = vat_task_int(t, "months_max");
    long cmin = vat_task_int(t, "carriers_min"), cmax = vat_task_int(t, "carriers_max");
    double empty_share = vat_task_real(t, "empty_share");
    double gap_chance = vat_task_real(t, "gap_month_chance");

    long want = vat_rng_range(r, mmin, mmax);
    int nm = (int)(want > PV_MAX_MONTHS ? PV_MAX_MONTHS : want < 2 ? 2 : want);
    want = vat_rng_range(r, cmin, cmax);
    if (want > PV_MAX_CARRIERS)
        want = PV_MAX_CARRIERS;
    const char *carriers[PV_MAX_CARRIERS];
    int nc = (int)vat_gen_distinct(r, "carrier", carriers, (size_t)(want < 2 ? 2 : want));
    if (nc < 2)
        return vat_err_set(e, "%s: the 'carrier' word list has fewer than 2 entries", t->id);
    qsort(carriers, (size_t)nc, sizeof *carriers, cmp_str);

    /* Consecutive calendar months, one of them (never the first or last)
     * skipped when a gap is drawn: a month with no shipment is not in the
     * file, so it is not a row of the grid either. */
    int gap = nm >= 3 && vat_rng_chance(r, gap_chance) ? (int)vat_rng_range(r, 1, nm - 1) : -1;
    int y = (int)vat_rng_range(r, 2021, 2024), m0 = (int)vat_rng_range(r, 1, 12);
    char months[PV_MAX_MONTHS][16];
    for (int i = 0, k = 0; i < nm; k++) {
        int mm = (m0 - 1 + k) % 12 + 1, yy = y + (m0 - 1 + k) / 12;
        if (k != gap)
            snprintf(months[i++], sizeof months[0], "%04d-%02d", yy, mm);
    }

    bool empty[PV_MAX_MONTHS][PV_MAX_CARRIERS];
    pv_draw_empty(r, empty, nm, nc, empty_share);
    int nfull = 0, nempty = 0;
    for (int i = 0; i < nm; i++)
        for (int j = 0; j < nc; j++)
            nfull += !empty[i][j], nempty += empty[i][j];

    size_t n;
    struct pv_row *rows = pv_rows(r, empty, nm, nc, rmin, rmax, nfull, &n);

    struct pv_priv *pv = vat_xcalloc(1, sizeof *pv);
    pv->nm = nm;
    pv->nc = nc;
    for (int i = 0; i < nm; i++)
        memcpy(pv->month[i], months[i], sizeof months[i]);
    for (int j = 0; j < nc; j++)
        snprintf(pv->carrier[j], sizeof pv->carrier[j], "%s", carriers[j]);
    t->priv = pv;
    t->priv_free = free;

    size_t ncity = 0;
    const char *const *cities = vat_words("city", &ncity);
    if (!cities || ncity < 2) {
        free(rows);
        return vat_err_set(e, "%s: the 'city' word list has fewer than 2 entries", t->id);
    }
    /* A depot ships from a handful of hubs to many destinations. */
    const char *hubs[3];
    size_t nhub = vat_gen_distinct(r, "city", hubs, 3);

    struct vat_csv c = VAT_CSV_INIT;
    pv_csv(r, t->side, rows, n, pv, months, carriers, hubs, nhub, cities, ncity, &c);
    free(rows);

    struct vat_axl_state st;
    if (vat_axl_begin(t, &pv_desc, &st, e) != 0 || vat_axl_write(t, &st, &c, &pv_desc, e) < 0) {
        vat_csv_release(&c);
        return -1;
    }

    struct vat_buf b = VAT_BUF_INIT;
    bool nat = vat_prompt_natural(t);
    struct vat_buf cols = VAT_BUF_INIT;
    vat_prompt_cols(&cols, t, nat ? pv_cols_natural : pv_cols_explicit,
                    VAT_N_OF(pv_cols_natural), NULL);
    const char *kv[] = {
        "topic", "[[our carriers' volumes|the warehouse shipments|outbound shipping]]",
        "what", nat ? "[[the warehouse's shipping log|our outbound shipments{#pl}|the "
                      "shipments that left the warehouse{#pl}]]"
                    : "[[a shipping log of a warehouse|a warehouse's shipping log|the "
                      "shipments of a warehouse{#pl}]]",
        "unit", "shipment",
        "cols", cols.data,
        NULL,
    };
    vat_prompt_open(&b, t, kv);
    vat_prompt_data(&b, t, kv);
    vat_buf_release(&cols);
    vat_buf_puts(&b, "\n\n");
    pv_say_question(&b, t);
    vat_buf_puts(&b, "\n\n");
    if (nat) {
        vat_prompt_answer(&b, t, "[[a JSON object with one key per month (YYYY-MM), each "
                                 "holding an object from every carrier to its number of "
                                 "shipments that month as an integer|a JSON object keyed by "
                                 "month (YYYY-MM) whose values map each carrier to its "
                                 "shipment count that month, an integer]], [[like|for "
                                 "example|e.g.]] "
                                 "{\"<month>\": {\"<carrier>\": <count>, ...}, ...}");
    } else {
        vat_prompt_answer(&b, t, "[[an object whose keys are the months spelled exactly as in "
                                 "the `month` column (YYYY-MM)|an object keyed by the months "
                                 "as written in the `month` column (YYYY-MM)]] [[and whose "
                                 "values are objects mapping|with, for each month, an object "
                                 "from]] [[each carrier name, spelled exactly as in the "
                                 "`carrier` column,|each carrier, as written in the `carrier` "
                                 "column,]] to [[its number of shipments in that month as a JSON "
                                 "integer|the carrier's shipment count that month, a JSON "
                                 "integer]], [[for example|like]] {\"<month>\": "
                                 "{\"<carrier>\": <count>, \"<other "
                                 "carrier>\": 0}, \"<other month>\": {\"<carrier>\": <count>, "
                                 "\"<other carrier>\": <count>}}. [[Key order does not "
                                 "matter|The order of the keys does not matter|Keys may come in "
                                 "any order]]");
        vat_buf_putc(&b, ' ');
        vat_prompt_tolerance(&b, t, PV_REL_TOL, PV_ABS_TOL);
    }
    vat_buf_puts(&b, "\n\n");
    vat_axl_prompt(&b, t, &st, 0, &c, &pv_desc);
    t->prompt = vat_buf_detach(&b);
    vat_csv_release(&c);

    t->params = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "count_of", "shipments", "row_key",
                          "month", "column_key", "carrier", "month_format", "YYYY-MM",
                          "empty_combinations", "listed with 0", "months_not_in_file",
                          "omitted");
    vat_axl_finish(t, &st);


    struct vat_an_spec s = {.shape = "object_of_objects", .integer = true,
                            .rel_tol = PV_REL_TOL, .abs_tol = PV_ABS_TOL};
    t->spec = vat_an_value_spec(&s);
    return 0;
}

/* Counts shipments per month and carrier over the rows read back from
 * the fixture.  With zeros, every month x carrier of the file is listed
 * (gold); without, only the combinations that occur (the trap). */
static json_t *pv_count_file(const struct vat_task *t, bool zeros, bool misread,
                             struct vat_err *e)
{
    struct vat_csv c = VAT_CSV_INIT;
    if (vat_axl_read(t, 0, pv_cols, PV_NCOLS, &pv_desc, misread, &c, e) != 0)
        return NULL;
    struct vat_an_tally months = VAT_AN_TALLY_INIT, carriers = VAT_AN_TALLY_INIT;
    struct vat_an_tally cells = VAT_AN_TALLY_INIT;
    json_t *out = NULL;
    for (size_t i = 1; i < c.nrows; i++) {
        const char *m = vat_csv_get(&c, i, C_MONTH), *k = vat_csv_get(&c, i, C_CARRIER);
        /* The misreading takes whatever rows it meets as shipments. */
        if (!misread && vat_parse_month(m, NULL, NULL) != 0) {
            vat_err_set(e, "%s: '%s' record %zu: month '%s' is not YYYY-MM", t->id,
                        t->fixture[0].path, i + 1, m);
            goto done;
        }
        if (!misread && !k[0]) {
            vat_err_set(e, "%s: '%s' record %zu: the carrier is blank", t->id,
                        t->fixture[0].path, i + 1);
            goto done;
        }
        vat_an_tally_add(&months, m, 1);
        vat_an_tally_add(&carriers, k, 1);
        /* months hold no newline, so "month\ncarrier" names one cell */
        char *cell = vat_xasprintf("%s\n%s", m, k);
        vat_an_tally_add(&cells, cell, 1);
        free(cell);
    }
    if (months.n == 0) {
        vat_err_set(e, "%s: '%s' has no shipment", t->id, t->fixture[0].path);
        goto done;
    }
    vat_an_tally_sort(&months);
    vat_an_tally_sort(&carriers);
    out = json_object();
    for (size_t i = 0; i < months.n; i++) {
        json_t *row = json_object();
        for (size_t j = 0; j < carriers.n; j++) {
            char *cell = vat_xasprintf("%s\n%s", months.e[i].key, carriers.e[j].key);
            const struct vat_an_entry *x = vat_an_tally_find(&cells, cell);
            free(cell);
            if (x || zeros)
                json_object_set_new(row, carriers.e[j].key, json_integer(x ? x->n : 0));
        }
        json_object_set_new(out, months.e[i].key, row);
    }
done:
    vat_an_tally_release(&months);
    vat_an_tally_release(&carriers);
    vat_an_tally_release(&cells);
    vat_csv_release(&c);
    return out;
}

static int pv_reference(struct vat_task *t, struct vat_err *e)
{
    return vat_an_gold_from(t, pv_count_file(t, true, false, e), NULL, e);
}

/* The grid the generator planted, as a JSON answer. */
static json_t *pv_planted(const struct pv_priv *pv)
{
    json_t *o = json_object();
    for (int i = 0; i < pv->nm; i++) {
        json_t *row = json_object();
        for (int j = 0; j < pv->nc; j++)
            json_object_set_new(row, pv->carrier[j], json_integer(pv->count[i][j]));
        json_object_set_new(o, pv->month[i], row);
    }
    return o;
}

/* SQL over the CSV loaded into SQLite: the distinct months cross-joined
 * with the distinct carriers, left-joined to the shipments, so an empty
 * combination counts 0; then the generator's planted grid. */
static int pv_confirm(const struct vat_task *t, struct vat_err *e)
{
    static const struct vat_an_query q = {
        .table = "shipments", .kind = VAT_AN_OBJECT_OF_OBJECTS,
        .sql = "SELECT m.month, k.carrier, COUNT(s.shipment_id) "
               "FROM (SELECT DISTINCT month FROM shipments) AS m "
               "CROSS JOIN (SELECT DISTINCT carrier FROM shipments) AS k "
               "LEFT JOIN shipments AS s ON s.month = m.month AND s.carrier = k.carrier "
               "GROUP BY m.month, k.carrier ORDER BY m.month, k.carrier"};
    int rc = vat_axl_confirm_query(t, &q, pv_cols, PV_NCOLS, 0, 0, e);
    if (rc != 0 || !t->priv)
        return rc;
    return vat_an_confirm_value(t, pv_planted(t->priv), "the generator's planted counts", 0, 0,
                                e);
}

static int pv_trap(struct vat_task *t, struct vat_err *e)
{
    if (vat_axl_trap(t) != VAT_AXL_OWN) /* the layout's misreading, zero cells kept */
        return vat_an_trap_from(t, pv_count_file(t, true, true, e));
    return vat_an_trap_from(t, pv_count_file(t, false, false, e));
}

/* ---- the program form ------------------------------------------------------ */

static const char *const pv_types[PV_NCOLS] = {"TEXT", "TEXT", "TEXT", "TEXT",
                                               "TEXT", "INTEGER", "REAL"};
static const char *const pv_tables[] = {"shipments", "shipping_log", "dispatches", "consignments",
                                        "parcel_moves"};
static const char *const pv_outs[] = {"n_shipments", "shipment_count", "num_shipments", "cnt",
                                      "shipments_n"};

static char *pv_pf_question(struct vat_task *t)
{
    struct vat_buf b = VAT_BUF_INIT;
    pv_say_question(&b, t);
    return vat_buf_detach(&b);
}

static char *pv_pf_shape(struct vat_task *t, const struct vat_pf_names *n)
{
    const char *kv[] = {"out", n->out, "dir", n->descending ? "descending" : "ascending", NULL};
    if (vat_prompt_natural(t))
        return vat_prompt_text(
            t, 's',
            "[[Return|It should return|I'd like]] three columns, `month`, `carrier` (both as "
            "stored) and `{out}` ([[the number of shipments|how many shipments]]), one row per "
            "month and carrier [[of the grid|as above]], [[ordered|sorted]] by `month` {dir}, "
            "then by `carrier` {dir}.",
            kv);
    return vat_prompt_text(
        t, 's',
        "[[It must return|The result must have|Return]] exactly three columns, `month` (as "
        "stored), `carrier` (as stored) and `{out}` (the number of shipments, an integer): one "
        "row for every pair of a month that appears in the table and a carrier that appears in "
        "the table, the pairs without any shipment included with {out} = 0, and no other rows, "
        "[[ordered|sorted]] by `month` {dir}, then by `carrier` {dir} (SQLite's default text "
        "order).",
        kv);
}

/* The full grid: distinct months crossed with distinct carriers, left
 * joined to the shipments, so an empty pair counts 0. */
static char *pv_pf_gold(const struct vat_task *t, const struct vat_pf_names *n)
{
    (void)t;
    const char *d = n->descending ? " DESC" : "";
    return vat_xasprintf("SELECT m.month, k.carrier, COUNT(s.shipment_id) AS %s\n"
                         "FROM (SELECT DISTINCT month FROM %s) AS m\n"
                         "CROSS JOIN (SELECT DISTINCT carrier FROM %s) AS k\n"
                         "LEFT JOIN %s AS s ON s.month = m.month AND s.carrier = k.carrier\n"
                         "GROUP BY m.month, k.carrier\nORDER BY m.month%s, k.carrier%s",
                         n->out, n->table, n->table, n->table, d, d);
}

/* The named mistake: only the pairs that occur, the zero cells omitted. */
static char *pv_pf_trap(const struct vat_task *t, const struct vat_pf_names *n)
{
    (void)t;
    const char *d = n->descending ? " DESC" : "";
    return vat_xasprintf("SELECT month, carrier, COUNT(*) AS %s\nFROM %s\n"
                         "GROUP BY month, carrier\nORDER BY month%s, carrier%s",
                         n->out, n->table, d, d);
}

/* Variant k: the task's carriers over new months (other years than the
 * main fixture's), rows in random order.  Every variant has empty month x
 * carrier pairs (the trap omits them), a carrier that ships in one month
 * only (it is still a column of every month), a month served by one
 * carrier only, blank `origin`, `destination`, `parcels` and `weight_kg`
 * cells (a count of a column with blanks, or a sum of parcels, is not the
 * number of rows) and two shipments that are the same but for their id (a
 * count of distinct values is not the number of rows).  Variant 1's months
 * cross a year end (December, then January), variant 2 skips a calendar
 * month inside its span (a month not in the file is no row) and has a
 * shipment of 0 parcels and 0.0 kg, variant 3 has a single-shipment
 * month and the carrier `bpost`, spelled in lower case (SQLite's text
 * order puts it after every capitalised name, a case-blind order does
 * not). */
static int pv_pf_variant(const struct vat_task *t, struct vat_rng *r, int k, struct vat_csv *c,
                         struct vat_err *e)
{
    const struct pv_priv *pv = t->priv;
    if (!pv || pv->nc < 2)
        return vat_err_set(e, "%s: variants need the generator's carriers", t->id);
    int nc = pv->nc, nm = (int)vat_rng_range(r, 3, 5);
    const char *carrier[PV_MAX_CARRIERS + 1];
    for (int j = 0; j < nc; j++)
        carrier[j] = pv->carrier[j];
    if (k == 3 && nc < PV_MAX_CARRIERS + 1)
        carrier[nc++] = "bpost"; /* lower case: after "Yamato" in text order */
    /* months: consecutive from a start, one skipped in variant 2 */
    int y = (int)vat_rng_range(r, 2026, 2030);
    int m0 = k == 1 ? 12 - (int)vat_rng_range(r, 0, nm - 2) : (int)vat_rng_range(r, 1, 6);
    int gap = k == 2 ? (int)vat_rng_range(r, 1, nm - 1) : -1;
    char month[PV_MAX_MONTHS][16];
    for (int i = 0, s = 0; i < nm; s++) {
        int mm = (m0 - 1 + s) % 12 + 1, yy = y + (m0 - 1 + s) / 12;
        if (s != gap)
            snprintf(month[i++], sizeof month[0], "%04d-%02d", yy, mm);
    }
    /* The grid: 1..3 shipments a cell, ~1 in 4 cells empty; the sparse
     * carrier ships in month `only` alone; month `lone` has one carrier. */
    int cnt[PV_MAX_MONTHS][PV_MAX_CARRIERS + 1];
    int sparse = (int)vat_rng_below(r, (uint32_t)nc), only = (int)vat_rng_below(r, (uint32_t)nm);
    int lone = (only + 1 + (int)vat_rng_below(r, (uint32_t)(nm - 1))) % nm;
    int lone_c = (sparse + 1 + (int)vat_rng_below(r, (uint32_t)(nc - 1))) % nc;
    size_t n = 0;
    for (int i = 0; i < nm; i++)
        for (int j = 0; j < nc; j++) {
            int x = (int)vat_rng_range(r, 1, 3);
            if (vat_rng_chance(r, 0.25))
                x = 0;
            if (j == sparse)
                x = i == only ? x + 1 : 0;
            if (i == lone)
                x = j == lone_c ? (k == 3 ? 1 : x + 1) : 0;
            cnt[i][j] = x;
            n += (size_t)x;
        }
    /* every month keeps a shipment: its place in the span is drawn */
    for (int i = 0; i < nm; i++) {
        int any = 0;
        for (int j = 0; j < nc; j++)
            any += cnt[i][j];
        if (!any)
            cnt[i][lone_c] = 1, n++;
    }
    /* the duplicate pair: a second copy of the first row, new id */
    struct pv_row *rows = vat_xcalloc(n + 1, sizeof *rows);
    size_t at = 0;
    for (int i = 0; i < nm; i++)
        for (int j = 0; j < nc; j++)
            for (int x = 0; x < cnt[i][j]; x++, at++) {
                rows[at].month = i;
                rows[at].carrier = j;
                rows[at].key = vat_rng_u32(r);
            }
    vat_rng_shuffle(r, rows, n, sizeof *rows);
    size_t ncity = 0;
    const char *const *cities = vat_words("city", &ncity);
    if (!cities || ncity < 2) {
        free(rows);
        return vat_err_set(e, "%s: the 'city' word list has fewer than 2 entries", t->id);
    }
    vat_csv_add_row(c, pv_cols, PV_NCOLS);
    long id = (long)vat_rng_range(r, 2000000, 7000000);
    char prev[PV_NCOLS - 1][40];
    for (size_t i = 0; i <= n; i++) {
        const struct pv_row *x = &rows[i < n ? i : 0];
        id += (long)vat_rng_range(r, 1, 9);
        id = vat_side_next_id(t->side, "SHP-", 7, id);
        vat_csv_row_begin(c);
        vat_csv_addf(c, "SHP-%07ld", id);
        if (i == n) { /* the duplicate of row 0 */
            for (int col = 0; col < PV_NCOLS - 1; col++)
                vat_csv_add(c, prev[col]);
            break;
        }
        const char *from = cities[vat_rng_below(r, (uint32_t)ncity)];
        const char *to = cities[vat_rng_below(r, (uint32_t)ncity)];
        long parcels = vat_rng_chance(r, 0.6) ? 1 : (long)vat_rng_range(r, 2, 14);
        long grams = parcels * (long)vat_rng_range(r, 300, 18000);
        if (k == 2 && i == 1)
            parcels = grams = 0;
        char cell[PV_NCOLS - 1][40];
        snprintf(cell[0], sizeof cell[0], "%s", month[x->month]);
        snprintf(cell[1], sizeof cell[1], "%s", carrier[x->carrier]);
        snprintf(cell[2], sizeof cell[2], "%s", vat_rng_chance(r, 0.15) ? "" : from);
        snprintf(cell[3], sizeof cell[3], "%s", vat_rng_chance(r, 0.15) ? "" : to);
        /* row 2 always has blank parcels and weight, variant 2's row 1
         * never (its 0 parcels are the boundary) */
        bool blank_load = vat_rng_chance(r, 0.15);
        blank_load = i == 2 || (blank_load && !(k == 2 && i == 1));
        if (blank_load)
            cell[4][0] = cell[5][0] = '\0';
        else {
            snprintf(cell[4], sizeof cell[4], "%ld", parcels);
            snprintf(cell[5], sizeof cell[5], "%ld.%ld", grams / 1000, grams % 1000 / 100);
        }
        for (int col = 0; col < PV_NCOLS - 1; col++) {
            vat_csv_add(c, cell[col]);
            if (i == 0)
                memcpy(prev[col], cell[col], sizeof prev[col]);
        }
    }
    free(rows);
    return 0;
}

static const struct vat_progform pv_progform = {
    .tables = pv_tables,
    .ntables = sizeof pv_tables / sizeof *pv_tables,
    .outs = pv_outs,
    .nouts = sizeof pv_outs / sizeof *pv_outs,
    .columns = pv_cols,
    .types = pv_types,
    .ncols = PV_NCOLS,
    .ordered = true,
    .kind = VAT_AN_OBJECT_OF_OBJECTS,
    .rel_tol = PV_REL_TOL,
    .abs_tol = PV_ABS_TOL,
    .nvariants = 3,
    .question = pv_pf_question,
    .shape = pv_pf_shape,
    .gold_sql = pv_pf_gold,
    .trap_sql = pv_pf_trap,
    .variant = pv_pf_variant,
};

/* Shipment ids are unique: a repeated row is a copy. */
/* (No totals line: its blank month is no month, which the reader
 * refuses, and a month of TOTAL no better.) */
static const struct vat_trapmods pv_modules = {
    .duplicates = true, .id = "shipment_id", .date = "month", .date_month = true};

const struct vat_template vat_tmpl_pivot = {
    .version = VAT_TEMPLATE_V1,
    .name = "pivot",
    .family = "analytics",
    .answer_kind = "value",
    .trap = "Listing only the month and carrier combinations that occur, omitting the zero cells.",
    .summary = "Shipments per month and carrier over every month x carrier in the file, zero "
               "where none.",
    .params = pv_params,
    .default_count = 12,
    .generate = pv_generate,
    .reference = pv_reference,
    .confirm = pv_confirm,
    .trap_answer = pv_trap,
    .check = vat_check_task,
    .giveaways = pv_giveaways,
    .answer_columns = pv_answer_columns,
    .progform = &pv_progform,
    .conventions = pv_conventions,
    .defects = pv_defects,
    .modules = &pv_modules,
};
