/* skeleton.c — the copy-me template (analytics family).  It is compiled
 * and held to the contract and the rules (tests/test_contract.c,
 * tests/test_rules.c, tests/test_analytics.c with its cases file
 * tests/data/cases/skeleton.txt) but not registered, so it never enters a
 * corpus.
 *
 * To write a new template (docs/adding-a-template.md has the long form):
 *   1. cp templates/skeleton.c templates/<name>.c
 *      cp tests/data/cases/skeleton.txt tests/data/cases/<name>.txt
 *      sed -i 's/skeleton/<name>/g' templates/<name>.c
 *      echo 'VAT_TEMPLATE(<name>)' >> templates/registry.def
 *   2. Run `make test` unchanged: the copy passes, because the skeleton does.
 *   3. Evolve it under test: fixture, question, trap, second derivation,
 *      and the cases file with them; keep `make test` green at every step.
 *   4. Give it a count in seeds.toml ([templates.<name>] count = N):
 *      .default_count = 0 below means no task is drawn otherwise.
 *
 * The skeleton's question: how many items have a quantity at or above T.
 * Its trap: `>` where `>=` is right — armed on every draw by planting two
 * items exactly at T.  It keeps no planted truth (t->priv stays NULL); a
 * template that does sets t->priv_free too.  Exports vat_tmpl_skeleton. */
#include <stdio.h>
#include <stdlib.h>

#include "analytics.h"
#include "template.h"
#include "values.h"

static const char *const cols[] = {"item_id", "quantity"};

static const struct vat_param params[] = {
    {.name = "rows_min", .type = VAT_PARAM_INT, .def = 20, .min = 5, .max = 10000,
     .doc = "fewest data rows", .role = VAT_PARAM_ROWS},
    {.name = "rows_max", .type = VAT_PARAM_INT, .def = 40, .min = 5, .max = 10000,
     .doc = "most data rows", .role = VAT_PARAM_ROWS},
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
 * A cell that is not a whole number refuses the file, naming the record.
 * Returns the count as a JSON integer, or NULL with e set. */
static json_t *count_from_file(const struct vat_task *t, int ge, struct vat_err *e)
{
    long T, n = 0;
    struct vat_csv c = VAT_CSV_INIT;
    if (threshold(t, &T, e) != 0 || vat_an_read_csv(t, 0, cols, 2, &c, e) != 0)
        return NULL;
    for (size_t r = 1; r < c.nrows; r++) {
        const char *cell = vat_csv_get(&c, r, 1);
        char *end;
        long q = strtol(cell, &end, 10);
        if (!*cell || *end) {
            vat_err_set(e, "%s: '%s' record %zu: quantity '%s' is not a whole number", t->id,
                        t->fixture[0].path, r + 1, cell);
            vat_csv_release(&c);
            return NULL;
        }
        n += ge ? q >= T : q > T;
    }
    vat_csv_release(&c);
    return json_integer(n);
}

/* Gold from the fixture as it lies on disk, never from t->priv: the rules
 * test swaps fixtures between tasks and expects gold to follow. */
static int reference(struct vat_task *t, struct vat_err *e)
{
    return vat_an_gold_from(t, count_from_file(t, 1, e), NULL, e);
}

/* The second derivation answers the question another way (SQL over the
 * CSV loaded into SQLite, where reference counts in C); .how names it in a
 * disagreement, and the cases file's `confirm` line repeats that name. */
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

/* The trap, computed honestly with the named mistake. */
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
    .default_count = 0, /* no task unless seeds.toml gives [templates.<name>] count */
    .generate = generate,
    .reference = reference,
    .confirm = confirm,
    .trap_answer = trap_answer,
    .check = vat_check_task,
};
