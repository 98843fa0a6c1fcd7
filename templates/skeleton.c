/* skeleton.c — the copy-me template.  It is compiled and contract-tested
 * (tests/test_contract.c) but not registered, so it never enters a corpus.
 *
 * To write a new template (docs/adding-a-template.md has the long form):
 *   1. Copy this file to templates/<name>.c; rename vat_tmpl_skeleton to
 *      vat_tmpl_<name> and .name to "<name>".
 *   2. Add VAT_TEMPLATE(<name>) and &vat_tmpl_<name> to templates/registry.c.
 *   3. Build unchanged and run `make test`: the contract test now covers
 *      your copy, which passes because the skeleton does.
 *   4. Evolve it under test: fixture, question, trap, second derivation;
 *      keep the contract test green at every step.
 *
 * The skeleton's question: how many items have a quantity at or above T.
 * Its trap: `>` where `>=` is right — armed by planting items exactly at T.
 * Exports vat_tmpl_skeleton. */
#include <stdio.h>
#include <stdlib.h>

#include "analytics.h"
#include "template.h"
#include "values.h"

static const char *const cols[] = {"item_id", "quantity"};

static const struct vat_param params[] = {
    {.name = "rows_min", .type = VAT_PARAM_INT, .def = 20, .min = 5, .max = 10000,
     .doc = "fewest data rows"},
    {.name = "rows_max", .type = VAT_PARAM_INT, .def = 40, .min = 5, .max = 10000,
     .doc = "most data rows"},
    {0},
};

/* The threshold T lives in the params; everything else is read back. */
static int threshold(const struct vat_task *t, long *T, struct vat_err *e)
{
    return vat_an_param_int(t, "threshold", 0, 100, T, e);
}

static int generate(struct vat_task *t, struct vat_rng *rng, struct vat_err *e)
{
    long lo = vat_task_int(t, "rows_min"), hi = vat_task_int(t, "rows_max");
    long rows = vat_rng_range(rng, lo, hi > lo ? hi : lo);
    long T = vat_rng_range(rng, 20, 80);
    struct vat_csv c = VAT_CSV_INIT;
    vat_csv_add_row(&c, cols, 2);
    for (long i = 0; i < rows; i++) {
        char id[32];
        /* Two rows sit exactly at T so `>` and `>=` always differ. */
        long q = i < 2 ? T : vat_rng_range(rng, 0, 100);
        vat_csv_row_begin(&c);
        vat_csv_add(&c, vat_gen_id(rng, "ITM-", 5, id, sizeof id));
        vat_csv_addf(&c, "%ld", q);
    }
    /* Planted rows first would be a tell; shuffle the data rows. */
    vat_rng_shuffle(rng, c.row + 1, c.nrows - 1, sizeof c.row[0]);
    int fi = vat_an_write_csv(t, &c, ".csv", "main", e);
    if (fi < 0) {
        vat_csv_release(&c);
        return -1;
    }

    t->params = json_object();
    json_object_set_new(t->params, "threshold", json_integer(T));
    t->difficulty = 1;
    struct vat_an_spec s = {.shape = "number", .integer = true, .rel_tol = 0, .abs_tol = 0.5};
    t->spec = vat_an_value_spec(&s);

    struct vat_buf b = VAT_BUF_INIT;
    vat_buf_puts(&b, "You are given a CSV table of stock items.\n\n");
    vat_an_prompt_csv(&b, t, fi, &c);
    vat_buf_printf(&b,
                   "\nQuestion: how many items have a quantity at or above %ld "
                   "(quantity >= %ld)?\n\nAnswer with one JSON number (an integer), "
                   "for example: 7\n",
                   T, T);
    t->prompt = vat_buf_detach(&b);
    vat_csv_release(&c);
    return 0;
}

/* Counts from the file as written; ge selects >= (gold) or > (the trap).
 * Returns the count as a JSON integer, or NULL with e set. */
static json_t *count_from_file(const struct vat_task *t, int ge, struct vat_err *e)
{
    long T, n = 0;
    struct vat_csv c = VAT_CSV_INIT;
    if (threshold(t, &T, e) != 0 || vat_an_read_csv(t, 0, cols, 2, &c, e) != 0)
        return NULL;
    for (size_t r = 1; r < c.nrows; r++) {
        long q = strtol(vat_csv_get(&c, r, 1), NULL, 10);
        n += ge ? q >= T : q > T;
    }
    vat_csv_release(&c);
    return json_integer(n);
}

static int reference(struct vat_task *t, struct vat_err *e)
{
    return vat_an_gold_from(t, count_from_file(t, 1, e), NULL, e);
}

static int confirm(const struct vat_task *t, struct vat_err *e)
{
    static const char *const types[] = {"TEXT", "INTEGER"};
    long T;
    if (threshold(t, &T, e) != 0)
        return -1;
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM items WHERE quantity >= %ld", T);
    struct vat_an_query q = {.table = "items", .types = types, .blank_is_null = 1, .sql = sql,
                             .kind = VAT_AN_NUMBER, .how = "sql count over the loaded csv"};
    return vat_an_confirm_query(t, &q, 0, 0, e);
}

static int trap_answer(struct vat_task *t, struct vat_err *e)
{
    return vat_an_trap_from(t, count_from_file(t, 0, e));
}

const struct vat_template vat_tmpl_skeleton = {
    .version = VAT_TEMPLATE_V1,
    .name = "skeleton",
    .family = "analytics",
    .answer_kind = "value",
    .trap = "Using > where >= is right, so items exactly at the threshold are missed.",
    .summary = "How many items have a quantity at or above a threshold.",
    .params = params,
    .default_count = 0,
    .generate = generate,
    .reference = reference,
    .confirm = confirm,
    .trap_answer = trap_answer,
    .check = vat_check_task,
};
