/* grouped_mean.c — the grouped_mean analytics template: a product-review
 * CSV (review_id, product, reviewer, reviewed_on, rating, verified_purchase)
 * whose rating is blank when the reviewer left no stars, and the exact
 * (unrounded) mean rating per product with blanks missing, not zero; a
 * product without any rating is left out.  The trap counts blanks as zero:
 * every fixture holds a rated product with a blank rating, so the trap's
 * mean for it is lower, and sometimes a product whose ratings are all
 * blank, which the trap lists with 0.  Exports vat_tmpl_grouped_mean. */
#include <stdio.h>
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

#define GM_MAX_PRODUCTS 10
#define GM_STARS 5
#define GM_REL_TOL 1e-6
#define GM_ABS_TOL 1e-9

enum { C_ID, C_PRODUCT, C_REVIEWER, C_DATE, C_RATING, C_VERIFIED, GM_NCOLS };
static const char *const gm_cols[GM_NCOLS] = {"review_id",   "product", "reviewer",
                                              "reviewed_on", "rating",  "verified_purchase"};

/* The question in both styles.  Natural: "the average rating" over the
 * reviews that have one, at full precision, for the products that have
 * one: conventions stated, never the blank cells. */
static const char *const gm_q_natural[] = {
    "What is the average rating of each product?",
    "How well is each `product` rated on average?",
    "Could you give me the mean star rating per product?",
    "For each product, what's its average `rating` so far?",
    "I'd like to see [[the average rating|the mean rating]] [[for|of]] every product.",
    "Which average rating does each product get?",
    "[[We're|I'm]] [[preparing|putting together]] the product scorecard: what is each "
    "product's average rating?",
};
static const char *const gm_c_natural[] = {
    "I mean the average {avg}, {prec}, for {prods}.",
    "Take the mean {avg} and keep it {prec}; I only need {prods}.",
    "Each average is {avg}, reported {prec}, and the answer covers {prods}.",
    "[[Average|Use the mean]] {avg}, {prec}, please[[,|;]] just {prods}.",
};
/* The explicit question, ways of asking it; the rules that follow it are
 * the same in substance. */
static const char *const gm_q_explicit[] = {
    "[[Question: what|What]] is the mean `rating` of each `product`?",
    "For every `product`, what is the average of its `rating` values?",
    "Average the `rating` column per `product`: what mean does each product get?",
    "Compute each `product`'s mean `rating`.",
    "What mean `rating` does each `product` have?",
    "Give the average `rating` per `product`.",
};
static const char *const gm_r_explicit[] = {
    "A blank rating is missing, not zero: [[leave it out of both the sum and the count of that "
    "product's ratings|it counts in neither the sum nor the count of that product's "
    "ratings|it adds nothing to the sum and nothing to the count]]. A product [[whose ratings "
    "are all blank|with only blank ratings|that has no rating at all]] [[has no mean and is "
    "left out of the answer|has no mean, so it is left out of the answer|is left out of the "
    "answer: it has no mean]] ([[not listed with 0 or null|not listed as 0 or null|neither 0 "
    "nor null]]). [[Give each mean exactly as computed, unrounded|Each mean is given "
    "unrounded, exactly as computed|Means are unrounded, as computed]][[ (for example 11/3 is "
    "3.6666666666666665, or 3.666667 at the least; 3.67 is too coarse)|: 11/3 is "
    "3.6666666666666665, or 3.666667 at the least, and 3.67 is too coarse| (for 11/3 give "
    "3.6666666666666665, or 3.666667 at the least, not 3.67)|; rounding to two decimals is "
    "too coarse]].",
};
/* The columns as the data description lists them, in each style. */
static const struct vat_prompt_col gm_cols_natural[] = {
    {"review_id", ""},
    {"product", "[[|the product reviewed]]"},
    {"reviewer", "[[name shown on the site|the display name|who wrote it]]"},
    {"reviewed_on", "[[YYYY-MM-DD|the review date, YYYY-MM-DD|when it was written, YYYY-MM-DD]]"},
    {"rating", "[[stars, 1 to 5|the star rating from 1 to 5|1 to 5 stars]]"},
    {"verified_purchase", "[[`yes` or `no`|whether they bought it, `yes` or `no`|`yes` for a "
     "verified "
        "buyer, else `no`]]"},
};
static const struct vat_prompt_col gm_cols_explicit[] = {
    {"review_id", "[[|the review number]]"},
    {"product", "[[the product reviewed|the reviewed product]]"},
    {"reviewer", "[[the name shown on the site|the reviewer's display name]]"},
    {"reviewed_on", "[[YYYY-MM-DD|the review date, YYYY-MM-DD]]"},
    {"rating", "[[the star rating, a whole number from 1 to 5; the cell is blank when the "
        "reviewer wrote a review without giving stars|a whole number of stars from 1 to "
        "5, blank when the reviewer gave no stars|stars from 1 to 5 as a whole number, "
        "or a blank cell when the review came without stars]]"},
    {"verified_purchase", "[[`yes` or `no`|`yes` for a verified purchase, `no` otherwise]]"},
};
static const char *const gm_giveaways[] = {
    "missing, not zero", "not zero", "as zero", "sum and the count", "left out of the answer",
    "not listed with 0", "tolerance", "11/3", NULL,
};
/* The blank ratings, which a natural prompt never describes. */
static const char *const gm_defects[] = {
    "blank", "no stars", "without stars", "gave no", "didn't rate", "missing", NULL,
};
static const char *const gm_answer_columns[] = {"product", "rating", NULL};
static const char *const gm_states_avg[] = {
    "over the reviews that have a rating", "of the reviews that carry a rating",
    "across the reviews with a rating", NULL,
};
static const char *const gm_states_prods[] = {
    "the products that have a rating", "the products with at least one rating",
    "products with a rating", NULL,
};
static const char *const gm_states_prec[] = {
    "at full precision", "without rounding", "unrounded", NULL,
};
static const struct vat_convention gm_conventions[] = {
    {"blank_ratings", gm_states_avg},
    {"products_without_rating", gm_states_prods},
    {"rounding", gm_states_prec},
    {NULL, NULL},
};

/* The question and what decides it, in the task's style (both answer
 * forms). */
static void gm_say_question(struct vat_buf *b, struct vat_task *t)
{
    if (vat_prompt_natural(t)) {
        VAT_PROMPT_PUT(b, t, 'q', gm_q_natural, NULL);
        vat_buf_putc(b, ' ');
        /* one draw per statement: an initializer list's order is unspecified */
        const char *avg = vat_prompt_state(t, "blank_ratings");
        const char *prods = vat_prompt_state(t, "products_without_rating");
        const char *prec = vat_prompt_state(t, "rounding");
        const char *kv[] = {"avg", avg, "prods", prods, "prec", prec, NULL};
        VAT_PROMPT_PUT(b, t, 'c', gm_c_natural, kv);
    } else {
        VAT_PROMPT_PUT(b, t, 'q', gm_q_explicit, NULL);
        vat_buf_putc(b, ' ');
        VAT_PROMPT_PUT(b, t, 'r', gm_r_explicit, NULL);
    }
}

static const struct vat_param gm_params[] = {
    {.name = "rows_min", .type = VAT_PARAM_INT, .def = 20, .min = 5, .max = 2000,
     .doc = "fewest data rows in a fixture", .role = VAT_PARAM_ROWS},
    {.name = "rows_max", .type = VAT_PARAM_INT, .def = 120, .min = 5, .max = 2000,
     .doc = "most data rows in a fixture", .role = VAT_PARAM_ROWS},
    {.name = "products_min", .type = VAT_PARAM_INT, .def = 3, .min = 2, .max = GM_MAX_PRODUCTS,
     .doc = "fewest distinct products"},
    {.name = "products_max", .type = VAT_PARAM_INT, .def = 6, .min = 2, .max = GM_MAX_PRODUCTS,
     .doc = "most distinct products"},
    {.name = "blank_share", .type = VAT_PARAM_REAL, .def = 0.15, .min = 0, .max = 0.6,
     .doc = "chance that a review outside the planted rows has a blank rating"},
    {.name = "unrated_product_chance", .type = VAT_PARAM_REAL, .def = 0.3, .min = 0, .max = 1,
     .doc = "chance that one product has only blank ratings (left out of the answer)"},
    VAT_AXL_PARAMS,
    VAT_PROGFORM_PARAM,
    {0},
};

/* The workbook format: the reviews table on sheet Reviews, blank ratings
 * as absent cells (the template's own trap).  Layout traps: reading the
 * other table, skipping ratings stored as text. */
static const enum vat_xl_kind gm_kind[GM_NCOLS] = {VAT_XLK_TEXT, VAT_XLK_TEXT, VAT_XLK_TEXT,
                                                   VAT_XLK_TEXT, VAT_XLK_INT,  VAT_XLK_TEXT};
static const char *const gm_groups[GM_NCOLS] = {"Review", "Review", "Review",
                                                "Review", "Score",  "Score"};
static const char *const gm_titles[] = {"Reviews, this month", "Reviews, last month",
                                        "Reviews held for moderation"};
static const struct vat_axl_desc gm_desc = {
    .sheet = "Reviews", .what = "reviews", .titles = gm_titles, .ntitles = 3, .kind = gm_kind,
    .group = gm_groups, .totals_col = -1,
    .traps = VAT_AXL_BIT(VAT_AXL_TWO_TABLES) | VAT_AXL_BIT(VAT_AXL_TEXT_NUMBERS),
    .decor = VAT_AXL_BIT(VAT_AXL_TITLE_NOTES) | VAT_AXL_BIT(VAT_AXL_GROUP_HEADER) |
             VAT_AXL_BIT(VAT_AXL_TEXT_NUMBERS)};

/* What the generator planted, for confirm's cross-check. */
struct gm_priv {
    struct vat_an_tally rated; /* product -> sum and count of its ratings */
    const char *products[GM_MAX_PRODUCTS]; /* the task's products, for variants */
    int nprod;
};

static void gm_priv_free(void *p)
{
    struct gm_priv *g = p;
    vat_an_tally_release(&g->rated);
    free(g);
}

/* Star-rating mixes seen on shops: most products skew positive, some are
 * divisive, a few are poor.  Weights for 1..5 stars. */
static const uint32_t gm_profiles[][GM_STARS] = {
    {1, 1, 2, 5, 8}, {1, 1, 3, 6, 4}, {4, 1, 1, 2, 5}, {3, 3, 3, 2, 1}, {1, 2, 4, 4, 2},
};
#define GM_NPROFILES (sizeof gm_profiles / sizeof gm_profiles[0])

struct gm_row {
    int product;
    int rating; /* 1..5, or 0 for a blank cell */
};

static int gm_stars(struct vat_rng *r, const uint32_t w[GM_STARS])
{
    return 1 + (int)vat_rng_weighted(r, w, GM_STARS);
}

/* Draws the rows: one rated review per product but the unrated one, one
 * blank review of a rated product (the row that arms the trap), one to
 * three blank reviews of the unrated product (if any); the rest at random,
 * never for the unrated product. */
static struct gm_row *gm_draw_rows(struct vat_rng *r, size_t n, int nprod, int unrated,
                                   double blank_share)
{
    struct gm_row *rows = vat_xcalloc(n, sizeof *rows);
    uint32_t weight[GM_MAX_PRODUCTS];
    const uint32_t *profile[GM_MAX_PRODUCTS];
    for (int i = 0; i < nprod; i++) {
        weight[i] = i == unrated ? 0 : (uint32_t)vat_rng_range(r, 1, 4);
        profile[i] = gm_profiles[vat_rng_below(r, GM_NPROFILES)];
    }
    size_t k = 0;
    for (int i = 0; i < nprod; i++, k++) {
        rows[k].product = i;
        rows[k].rating = i == unrated ? 0 : gm_stars(r, profile[i]);
    }
    int armed = (int)vat_rng_below(r, (uint32_t)(nprod - (unrated >= 0)));
    if (unrated >= 0 && armed >= unrated)
        armed++;
    rows[k].product = armed;
    rows[k++].rating = 0;
    if (unrated >= 0) {
        for (long extra = vat_rng_range(r, 0, 2); extra > 0 && k < n; extra--, k++) {
            rows[k].product = unrated;
            rows[k].rating = 0;
        }
    }
    for (; k < n; k++) {
        int g = (int)vat_rng_weighted(r, weight, (size_t)nprod);
        rows[k].product = g;
        rows[k].rating = vat_rng_chance(r, blank_share) ? 0 : gm_stars(r, profile[g]);
    }
    vat_rng_shuffle(r, rows, n, sizeof *rows);
    return rows;
}

/* Review sites show reviewers as "Maria L." mostly, sometimes in full. */
static void gm_reviewer(struct vat_rng *r, char *out, size_t cap)
{
    size_t nf = 0, nl = 0;
    const char *const *first = vat_words("first_name", &nf);
    const char *const *last = vat_words("last_name", &nl);
    if (first && last && nf && nl && vat_rng_chance(r, 0.7)) {
        /* one draw per statement, the last name first (the order the
         * corpus was drawn in, so its bytes stay) */
        uint32_t il = vat_rng_below(r, (uint32_t)nl);
        uint32_t jf = vat_rng_below(r, (uint32_t)nf);
        snprintf(out, cap, "%s %c.", first[jf], last[il][0]);
    } else
        vat_gen_person(r, out, cap);
}

static int gm_generate(struct vat_task *t, struct vat_rng *r, struct vat_err *e)
{
    long rmin = vat_task_int(t, "rows_min"), rmax = vat_task_int(t, "rows_max");
    long pmin = vat_task_int(t, "products_min"), pmax = vat_task_int(t, "products_max");
    double blank_share = vat_task_real(t, "blank_share");
    double unrated_chance = vat_task_real(t, "unrated_product_chance");

    const char *products[GM_MAX_PRODUCTS];
    long want = vat_rng_range(r, pmin, pmax);
    if (want > GM_MAX_PRODUCTS)
        want = GM_MAX_PRODUCTS;
    int nprod = (int)vat_gen_distinct(r, "product", products, (size_t)want);
    if (nprod < 2)
        return vat_err_set(e, "%s: the 'product' word list has fewer than 2 entries", t->id);

    long nl = vat_rng_range(r, rmin, rmax);
    size_t n = nl < nprod + 4 ? (size_t)nprod + 4 : (size_t)nl;
    int unrated = vat_rng_chance(r, unrated_chance) ? (int)vat_rng_below(r, (uint32_t)nprod) : -1;
    struct gm_row *rows = gm_draw_rows(r, n, nprod, unrated, blank_share);

    /* Dates ascend with the review ids, as an export sorted by id would. */
    int32_t start = vat_date_from_civil(2022, 1, 1) + (int32_t)vat_rng_range(r, 0, 900);
    int32_t span = (int32_t)vat_rng_range(r, 30, 365);
    int32_t *days = vat_gen_days_sorted(r, n, start, start + span);

    struct vat_csv c = VAT_CSV_INIT;
    vat_csv_add_row(&c, gm_cols, GM_NCOLS);
    long id = (long)vat_rng_range(r, 10000, 90000);
    struct gm_priv *pv = vat_xcalloc(1, sizeof *pv);
    memcpy(pv->products, products, sizeof products);
    pv->nprod = nprod;
    size_t blanks = 0;
    char who[64], date[11];
    for (size_t i = 0; i < n; i++) {
        id += (long)vat_rng_range(r, 1, 9);
        id = vat_side_next_id(t->side, "RV-", 6, id);
        gm_reviewer(r, who, sizeof who);
        vat_csv_row_begin(&c);
        vat_csv_addf(&c, "RV-%06ld", id);
        vat_csv_add(&c, products[rows[i].product]);
        vat_csv_add(&c, who);
        vat_csv_add(&c, vat_fmt_date(days[i], date));
        if (rows[i].rating > 0) {
            vat_csv_addf(&c, "%d", rows[i].rating);
            vat_an_tally_add(&pv->rated, products[rows[i].product], rows[i].rating);
        } else {
            vat_csv_add(&c, "");
            blanks++;
        }
        vat_csv_add(&c, vat_rng_chance(r, 0.8) ? "yes" : "no");
    }
    free(days);
    free(rows);
    t->priv = pv;
    t->priv_free = gm_priv_free;

    struct vat_axl_state st;
    if (vat_axl_begin(t, &gm_desc, &st, e) != 0 || vat_axl_write(t, &st, &c, &gm_desc, e) < 0) {
        vat_csv_release(&c);
        return -1;
    }

    struct vat_buf b = VAT_BUF_INIT;
    bool nat = vat_prompt_natural(t);
    struct vat_buf cols = VAT_BUF_INIT;
    vat_prompt_cols(&cols, t, nat ? gm_cols_natural : gm_cols_explicit,
                    VAT_N_OF(gm_cols_natural), NULL);
    const char *kv[] = {
        "topic", "[[our product reviews|the review scores|customer feedback on our products]]",
        "what", nat ? "[[the product reviews from our shop{#pl}|our shop's product "
                      "reviews{#pl}|an export of our product reviews|the reviews customers "
                      "left on our products{#pl}]]"
                    : "[[an export of product reviews from an online shop|the product reviews "
                      "of an online shop{#pl}|an online shop's review export]]",
        "unit", "review",
        "cols", cols.data,
        NULL,
    };
    vat_prompt_open(&b, t, kv);
    vat_prompt_data(&b, t, kv);
    vat_buf_release(&cols);
    vat_buf_puts(&b, "\n\n");
    gm_say_question(&b, t);
    vat_buf_puts(&b, "\n\n");
    if (nat) {
        vat_prompt_answer(&b, t, "[[a JSON object mapping each product, spelled as in "
                                 "`product`, to its average rating as a number|a JSON object "
                                 "from every product (as written in `product`) to its mean "
                                 "rating, a number]], [[like|for example|e.g.]] "
                                 "{\"<product>\": <mean>}");
    } else {
        vat_prompt_answer(&b, t, "[[an object whose keys are the product names spelled exactly "
                                 "as in the `product` column and whose values are the means as "
                                 "JSON numbers|an object mapping each product name, spelled "
                                 "exactly as in the `product` column, to its mean as a JSON "
                                 "number]], [[for example|like]] {\"<product>\": <mean>, "
                                 "\"<other product>\": <mean>}. [[Key order does not "
                                 "matter|The order of the keys does not matter|Keys may come in "
                                 "any order]]");
        vat_buf_putc(&b, ' ');
        vat_prompt_tolerance(&b, t, GM_REL_TOL, GM_ABS_TOL);
    }
    vat_buf_puts(&b, "\n\n");
    vat_axl_prompt(&b, t, &st, 0, &c, &gm_desc);
    t->prompt = vat_buf_detach(&b);
    vat_csv_release(&c);

    t->params = json_pack("{s:s, s:s, s:s, s:s, s:s}", "group_by", "product", "mean_of", "rating",
                          "blank_ratings", "missing", "products_without_rating", "omitted",
                          "rounding", "none");
    vat_axl_finish(t, &st);


    struct vat_an_spec s = {.shape = "object", .rel_tol = GM_REL_TOL, .abs_tol = GM_ABS_TOL};
    t->spec = vat_an_value_spec(&s);
    return 0;
}

/* Parses a rating cell: 1 with *stars set for "1".."5", 0 for a blank
 * cell, -1 for anything else. */
static int gm_parse_rating(const char *s, int *stars)
{
    if (s[0] == 0)
        return 0;
    if (s[0] >= '1' && s[0] <= '0' + GM_STARS && s[1] == 0) {
        *stars = s[0] - '0';
        return 1;
    }
    return -1;
}

/* Object product -> sum/n over the entries with n > 0, keys bytewise. */
static json_t *gm_means_json(struct vat_an_tally *tl)
{
    vat_an_tally_sort(tl);
    json_t *o = json_object();
    for (size_t i = 0; i < tl->n; i++) {
        const struct vat_an_entry *x = &tl->e[i];
        if (x->n > 0)
            json_object_set_new(o, x->key, json_real((double)x->sum / (double)x->n));
    }
    return o;
}

/* Means per product over the rows read back from the fixture; with
 * blank_as_zero a blank rating counts as a 0-star rating (the trap),
 * without it a blank is skipped (gold). */
static json_t *gm_mean_file(const struct vat_task *t, bool blank_as_zero, bool misread,
                            struct vat_err *e)
{
    struct vat_csv c = VAT_CSV_INIT;
    if (vat_axl_read(t, 0, gm_cols, GM_NCOLS, &gm_desc, misread, &c, e) != 0)
        return NULL;
    struct vat_an_tally tl = VAT_AN_TALLY_INIT;
    for (size_t i = 1; i < c.nrows; i++) {
        const char *product = vat_csv_get(&c, i, C_PRODUCT), *cell = vat_csv_get(&c, i, C_RATING);
        int stars = 0, k = gm_parse_rating(cell, &stars);
        if (k < 0) {
            vat_err_set(e, "%s: '%s' record %zu: rating '%s' is neither blank nor 1 to %d",
                        t->id, t->fixture[0].path, i + 1, cell, GM_STARS);
            vat_an_tally_release(&tl);
            vat_csv_release(&c);
            return NULL;
        }
        if (k == 1 || blank_as_zero)
            vat_an_tally_add(&tl, product, stars);
    }
    json_t *o = gm_means_json(&tl);
    vat_an_tally_release(&tl);
    vat_csv_release(&c);
    return o;
}

static int gm_reference(struct vat_task *t, struct vat_err *e)
{
    return vat_an_gold_from(t, gm_mean_file(t, false, false, e), "the fixture has no rating at all", e);
}

/* SQL AVG over the CSV loaded into SQLite with blank cells as NULL (AVG
 * skips NULLs, which is the rule the prompt states); then, when the
 * generator's planted sums and counts are at hand, those too.  The sums
 * are small integers, so both divisions are exact to the last bit; the
 * tiny tolerance only spares a future SQLite that sums differently. */
static int gm_confirm(const struct vat_task *t, struct vat_err *e)
{
    static const char *const types[GM_NCOLS] = {"TEXT", "TEXT", "TEXT", "TEXT", "REAL", "TEXT"};
    static const struct vat_an_query q = {
        .table = "ratings", .types = types, .blank_is_null = 1, .kind = VAT_AN_OBJECT,
        .how = "sql avg over the loaded csv",
        .sql = "SELECT product, AVG(rating) FROM ratings WHERE rating IS NOT NULL "
               "GROUP BY product ORDER BY product"};
    int rc = vat_axl_confirm_query(t, &q, gm_cols, GM_NCOLS, 1e-12, 0, e);
    if (rc != 0 || !t->priv)
        return rc;
    struct gm_priv *pv = t->priv;
    return vat_an_confirm_value(t, gm_means_json(&pv->rated), "the generator's planted ratings",
                                1e-12, 0, e);
}

static int gm_trap(struct vat_task *t, struct vat_err *e)
{
    if (vat_axl_trap(t) != VAT_AXL_OWN) /* the layout's misreading, blanks kept out */
        return vat_an_trap_from(t, gm_mean_file(t, false, true, e));
    return vat_an_trap_from(t, gm_mean_file(t, true, false, e));
}

/* ---- the program form ------------------------------------------------------ */

static const char *const gm_types[GM_NCOLS] = {"TEXT", "TEXT", "TEXT", "TEXT", "REAL", "TEXT"};
static const char *const gm_tables[] = {"reviews", "product_reviews", "review_export", "ratings",
                                        "customer_reviews"};
static const char *const gm_outs[] = {"mean_rating", "avg_rating", "mean_stars", "average_rating",
                                      "rating_mean"};

static char *gm_pf_question(struct vat_task *t)
{
    struct vat_buf b = VAT_BUF_INIT;
    gm_say_question(&b, t);
    return vat_buf_detach(&b);
}

static char *gm_pf_shape(struct vat_task *t, const struct vat_pf_names *n)
{
    const char *kv[] = {"out", n->out, "dir", n->descending ? "descending" : "ascending", NULL};
    if (vat_prompt_natural(t))
        return vat_prompt_text(
            t, 's',
            "[[Return|It should return|I'd like]] two columns, `product` (as stored) and "
            "`{out}` ([[its average rating|the product's mean rating]]), one row per product "
            "asked for, [[ordered|sorted]] by `product` {dir}.",
            kv);
    return vat_prompt_text(
        t, 's',
        "[[It must return|The result must have|Return]] exactly two columns, `product` (as "
        "stored) and `{out}` (the product's mean rating, a number), one row per product that "
        "has at least one rating and no other rows, [[ordered|sorted]] by `product` {dir} "
        "(SQLite's default text order).",
        kv);
}

static char *gm_pf_gold(const struct vat_task *t, const struct vat_pf_names *n)
{
    (void)t;
    return vat_xasprintf("SELECT product, AVG(rating) AS %s\nFROM %s\nWHERE rating IS NOT NULL\n"
                         "GROUP BY product\nORDER BY product%s",
                         n->out, n->table, n->descending ? " DESC" : "");
}

/* The named mistake: a blank rating counted as zero stars. */
static char *gm_pf_trap(const struct vat_task *t, const struct vat_pf_names *n)
{
    (void)t;
    return vat_xasprintf("SELECT product, AVG(COALESCE(rating, 0)) AS %s\nFROM %s\n"
                         "GROUP BY product\nORDER BY product%s",
                         n->out, n->table, n->descending ? " DESC" : "");
}

/* Variant k: the task's products with new reviews.  Every variant has a
 * product whose ratings are all blank (no qualifying row), and every
 * other product a 1-star and a 5-star rating (the boundary values; a sum,
 * minimum or maximum is not the mean) and a blank rating (the trap's
 * zero); blank reviewer cells; variant 2 gives one product a single
 * rating besides its blanks' neighbours. */
static int gm_pf_variant(const struct vat_task *t, struct vat_rng *r, int k, struct vat_csv *c,
                         struct vat_err *e)
{
    const struct gm_priv *pv = t->priv;
    if (!pv || pv->nprod < 2)
        return vat_err_set(e, "%s: variants need the generator's products", t->id);
    int np = pv->nprod;
    int unrated = (int)vat_rng_below(r, (uint32_t)np);
    vat_csv_add_row(c, gm_cols, GM_NCOLS);
    long id = (long)vat_rng_range(r, 10000, 90000);
    int32_t day = vat_date_from_civil(2022, 1, 1) + (int32_t)vat_rng_range(r, 0, 900);
    char who[64], date[11];
    for (int g = 0; g < np; g++) {
        int extra = (int)vat_rng_range(r, 0, 3);
        int nrow = g == unrated ? 2 : 3 + extra;
        for (int j = 0; j < nrow; j++) {
            int stars;
            if (g == unrated || j == 2)
                stars = 0;
            else if (j == 0)
                stars = 1;
            else if (j == 1)
                stars = k == 2 && g == (unrated + 1) % np ? 1 : 5;
            else
                stars = 1 + (int)vat_rng_below(r, GM_STARS);
            id += (long)vat_rng_range(r, 1, 9);
            id = vat_side_next_id(t->side, "RV-", 6, id);
            day += (int32_t)vat_rng_below(r, 3);
            gm_reviewer(r, who, sizeof who);
            bool blank_who = vat_rng_chance(r, 0.2);
            vat_csv_row_begin(c);
            vat_csv_addf(c, "RV-%06ld", id);
            vat_csv_add(c, pv->products[g]);
            vat_csv_add(c, blank_who ? "" : who);
            vat_csv_add(c, vat_fmt_date(day, date));
            if (stars > 0)
                vat_csv_addf(c, "%d", stars);
            else
                vat_csv_add(c, "");
            vat_csv_add(c, vat_rng_chance(r, 0.8) ? "yes" : "no");
        }
    }
    return 0;
}

static const struct vat_progform gm_progform = {
    .tables = gm_tables,
    .ntables = sizeof gm_tables / sizeof *gm_tables,
    .outs = gm_outs,
    .nouts = sizeof gm_outs / sizeof *gm_outs,
    .columns = gm_cols,
    .types = gm_types,
    .ncols = GM_NCOLS,
    .ordered = true,
    .kind = VAT_AN_OBJECT,
    .rel_tol = GM_REL_TOL,
    .abs_tol = GM_ABS_TOL,
    .nvariants = 3,
    .question = gm_pf_question,
    .shape = gm_pf_shape,
    .gold_sql = gm_pf_gold,
    .trap_sql = gm_pf_trap,
    .variant = gm_pf_variant,
};

/* Copies are drawn from the rated rows, and ratings spelled out are
 * among them: a blank rating moves no mean. */
static void gm_targets(const struct vat_task *t, const struct vat_csv *c, unsigned m, bool *is)
{
    (void)t;
    (void)m;
    for (size_t i = 1; i < c->nrows; i++)
        is[i] = vat_csv_get(c, i, C_RATING)[0] != 0;
}

/* Review ids are unique: a repeated row is a copy. */
static const struct vat_trapmods gm_modules = {.duplicates = true,
                                               .amount = "rating",
                                               .amount_words = true,
                                               .id = "review_id",
                                               .targets = gm_targets};

const struct vat_template vat_tmpl_grouped_mean = {
    .version = VAT_TEMPLATE_V1,
    .name = "grouped_mean",
    .family = "analytics",
    .answer_kind = "value",
    .trap = "Counting blank ratings as zero stars, which drags every mean with a blank down "
            "and lists an all-blank product with 0.",
    .summary = "Exact mean rating per product, blank ratings missing, products without any "
               "rating left out.",
    .params = gm_params,
    .default_count = 12,
    .generate = gm_generate,
    .reference = gm_reference,
    .confirm = gm_confirm,
    .trap_answer = gm_trap,
    .check = vat_check_task,
    .giveaways = gm_giveaways,
    .answer_columns = gm_answer_columns,
    .progform = &gm_progform,
    .conventions = gm_conventions,
    .defects = gm_defects,
    .modules = &gm_modules,
};
