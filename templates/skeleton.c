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
#include <string.h>

#include "analytics.h"
#include "prompt.h"
#include "template.h"
#include "values.h"

static const char *const cols[] = {"item_id", "quantity"};

static const struct vat_param params[] = {
    /* row counts are declared as such: inline = "full" caps them */
    {.name = "rows_min", .type = VAT_PARAM_INT, .def = 20, .min = 5, .max = 10000,
     .doc = "fewest data rows", .role = VAT_PARAM_ROWS},
    {.name = "rows_max", .type = VAT_PARAM_INT, .def = 40, .min = 5, .max = 10000,
     .doc = "most data rows", .role = VAT_PARAM_ROWS},
    {0},
};

/* The prompt, in both styles (templates/prompt.h has the grammar: [[a|b]]
 * draws one alternative, {name} fills a value).  Explicit spells out every
 * rule, the trap included; natural asks as a colleague would, stating the
 * convention that decides the answer ("at least T") and never the trap.
 * Each list is one slot ('q' the question, 'c' a convention); every slot
 * varies over four phrasings at least (tests/test_prompt.c). */
static const char *const q_explicit[] = {
    "How many items have a quantity at or above {T} (`quantity` >= {T})?",
    "Count the items whose `quantity` is {T} or more (`quantity` >= {T}).",
    "[[Question: what|What]] is the number of items with `quantity` >= {T}?",
    "For how many items is `quantity` at least {T} (`quantity` >= {T})?",
    "Give the count of items [[holding|with]] a `quantity` of {T} or more (`quantity` >= {T}).",
};
static const char *const r_explicit[] = {
    "[[An item exactly at|Items exactly at|An item whose quantity equals]] {T} counts too.",
};
static const char *const q_natural[] = {
    "How many of these items do we hold {atleast} of?",
    "[[For the reorder review|For the stock check|Before the audit]], how many items do we "
    "have {atleast} units of?",
    "Can you count the items we keep {atleast} of in stock?",
    "I need the number of items with {atleast} units in stock.",
    "How many items [[have|show]] {atleast} units on the shelf?",
};
/* Phrases the explicit prompt uses to name or avoid the trap: a natural
 * prompt holds none of them (tests/test_prompt.c). */
static const char *const giveaways[] = {">=", "exactly at", "counts too", "equals", NULL};
/* Phrases describing the data's corner or the mistake (never in a natural
 * prompt; tests/test_wording.c). */
static const char *const defects[] = {"on the threshold", "at the boundary", "strictly", NULL};
static const char *const answer_columns[] = {"quantity", NULL};
/* The param that decides the answer and the phrases that state it ("{}"
 * stands for its value): every natural prompt holds one. */
static const char *const states_threshold[] = {"at least {}", "{} or more", NULL};
static const struct vat_convention conventions[] = {
    {"threshold", states_threshold},
    {NULL, NULL},
};
static const struct vat_prompt_col cols_about[] = {
    {"item_id", "[[the item's code|the stock item]]"},
    {"quantity", "[[units in stock|how many we hold|the stock level]]"},
};

/* The threshold T lives in the params; everything else is read back. */
static int threshold(const struct vat_task *t, long *T, struct vat_err *e)
{
    return vat_an_param_int(t, "threshold", 0, 100, T, e);
}

/* The prompt: an opening, the data and its file, the question and the
 * answer's form, in the task's style. */
static void write_prompt(struct vat_task *t, int fi, const struct vat_csv *c, long T)
{
    bool nat = vat_prompt_natural(t);
    char Ts[24];
    snprintf(Ts, sizeof Ts, "%ld", T);
    struct vat_buf b = VAT_BUF_INIT, cl = VAT_BUF_INIT;
    VAT_PROMPT_COLS(&cl, t, cols_about, NULL);
    const char *kv[] = {
        "topic", "[[our stock|the warehouse counts|the inventory]]",
        "what", "[[a stock list|our stock items{#pl}|an inventory export]]",
        "unit", "item",
        "cols", cl.data,
        NULL,
    };
    vat_prompt_open(&b, t, kv);
    vat_prompt_data(&b, t, kv);
    vat_buf_release(&cl);
    vat_buf_puts(&b, "\n\n");
    vat_an_prompt_csv(&b, t, fi, c);
    vat_buf_puts(&b, "\n");
    if (nat) {
        /* the convention, drawn first: one draw per statement */
        char *atleast = vat_xstrdup(vat_prompt_state(t, "threshold"));
        char *p = strstr(atleast, "{}");
        struct vat_buf a = VAT_BUF_INIT;
        vat_buf_putn(&a, atleast, p ? (size_t)(p - atleast) : strlen(atleast));
        if (p)
            vat_buf_printf(&a, "%s%s", Ts, p + 2);
        const char *qkv[] = {"atleast", a.data, NULL};
        VAT_PROMPT_PUT(&b, t, 'q', q_natural, qkv);
        vat_buf_release(&a);
        free(atleast);
        vat_buf_puts(&b, "\n\n");
        vat_prompt_answer(&b, t, "the count as [[one|a single]] JSON integer, like 7");
    } else {
        const char *qkv[] = {"T", Ts, NULL};
        VAT_PROMPT_PUT(&b, t, 'q', q_explicit, qkv);
        vat_buf_putc(&b, ' ');
        VAT_PROMPT_PUT(&b, t, 'r', r_explicit, qkv);
        vat_buf_puts(&b, "\n\n");
        vat_prompt_answer(&b, t, "the number of items as a JSON integer, for example 7");
    }
    vat_buf_puts(&b, "\n");
    t->prompt = vat_buf_detach(&b);
}

static int generate(struct vat_task *t, struct vat_rng *rng, struct vat_err *e)
{
    long lo = vat_task_int(t, "rows_min"), hi = vat_task_int(t, "rows_max");
    long rows = vat_rng_range(rng, lo, hi > lo ? hi : lo);
    long T = vat_rng_range(rng, 20, 80);
    struct vat_csv c = VAT_CSV_INIT;
    vat_csv_add_row(&c, cols, 2);
    long id = vat_rng_range(rng, 10000, 60000);
    for (long i = 0; i < rows; i++) {
        /* Two rows sit exactly at T so `>` and `>=` always differ. */
        long q = i < 2 ? T : vat_rng_range(rng, 0, 100);
        /* Every data row starts with an id on the task's side of the
         * split (vat_side_next_id): no row of a train fixture can be a
         * row of a test fixture (docs/determinism.md). */
        id += vat_rng_range(rng, 1, 9);
        id = vat_side_next_id(t->side, "ITM-", 5, id);
        vat_csv_row_begin(&c);
        vat_csv_addf(&c, "ITM-%05ld", id);
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
    struct vat_an_spec s = {.shape = "number", .integer = true, .rel_tol = 0, .abs_tol = 0.5};
    t->spec = vat_an_value_spec(&s);
    write_prompt(t, fi, &c, T);
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
    .giveaways = giveaways,
    .answer_columns = answer_columns,
    .conventions = conventions,
    .defects = defects,
};
