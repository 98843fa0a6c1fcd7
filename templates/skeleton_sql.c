/* skeleton_sql.c — the copy-me template of the SQL family.  It is
 * compiled and held to the contract, the rules and the phrasing tests
 * (tests/test_contract.c, tests/test_rules.c, tests/test_prompt.c,
 * tests/test_wording.c) and to the strength target, but not registered,
 * so it never enters a corpus.
 *
 * To write a new SQL template (docs/adding-a-template.md):
 *   1. cp templates/skeleton_sql.c templates/<name>.c
 *      sed -i 's/skeleton_sql/<name>/g' templates/<name>.c
 *      echo 'VAT_TEMPLATE(<name>)' >> templates/registry.def
 *   2. Run `make test` unchanged: the copy passes, because the skeleton does.
 *   3. Evolve it under test: the question space, the schema, the rows of
 *      the main fixture and the corners of each held-out variant, the gold
 *      and trap queries, the second derivation from plain row reads, the
 *      prompt; keep `make test` green at every step.
 *   4. Give it a count in seeds.toml ([templates.<name>] count = N) and
 *      its question space a row in docs/scale.md.
 * The family's machinery (the main and variant databases, the schema and
 * rows in the prompt, the spec, gold proven on every fixture, confirm over
 * every fixture, the trap proven armed) is templates/sqlgen.h: this file
 * holds only its question.
 *
 * The skeleton's question: the ids of the items whose quantity is at or
 * above T, in id order, as one SELECT.  Its trap: `>` where `>=` is right,
 * armed by items exactly at T in every fixture; items at T - 1 and T + 1,
 * ids stored out of order and a variant where one item qualifies make the
 * gold query's every part matter, so its mutants die (strength).  Exports
 * vat_tmpl_skeleton_sql. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prompt.h"
#include "sqlgen.h"
#include "template.h"
#include "values.h"

#define REL_TOL 0.0
#define ABS_TOL 0.0

static const struct vat_param params[] = {
    {.name = "rows_min", .type = VAT_PARAM_INT, .def = 12, .min = 8, .max = 2000,
     .doc = "fewest items in the main fixture", .role = VAT_PARAM_ROWS},
    {.name = "rows_max", .type = VAT_PARAM_INT, .def = 30, .min = 8, .max = 2000,
     .doc = "most items in the main fixture", .role = VAT_PARAM_ROWS},
    {.name = "variants", .type = VAT_PARAM_INT, .def = 3, .min = 2, .max = 6,
     .doc = "held-out variant fixtures per task"},
    {0},
};

/* ---- the question space ----------------------------------------------------- */

static const char *const tables[] = {"stock", "inventory", "warehouse_items", "parts"};
static const char *const id_cols[] = {"item_id", "sku", "part_no"};
static const char *const qty_cols[] = {"quantity", "on_hand", "units"};
#define T_MIN 20
#define N_T 61
/* Every part the gold query spells (table, id and quantity columns, T) is
 * a digit of the question number: tasks 0..N_QUESTIONS-1 have distinct
 * golds by construction (vat_task_question).  2,196 questions. */
#define N_QUESTIONS (VAT_N_OF(tables) * VAT_N_OF(id_cols) * VAT_N_OF(qty_cols) * N_T)

struct question {
    int side; /* the task's (item ids are drawn on it: vat_side_owns) */
    const char *table, *id, *qty;
    long T;
    long rows_min, rows_max;
    char *schema, *insert;
};

static void question_free(void *p)
{
    struct question *q = p;
    if (q) {
        free(q->schema);
        free(q->insert);
        free(q);
    }
}

static void decode(struct question *q, uint64_t k)
{
    q->table = tables[vat_question_digit(&k, VAT_N_OF(tables))];
    q->id = id_cols[vat_question_digit(&k, VAT_N_OF(id_cols))];
    q->qty = qty_cols[vat_question_digit(&k, VAT_N_OF(qty_cols))];
    q->T = T_MIN + (long)vat_question_digit(&k, N_T);
}

/* ---- the fixture rows --------------------------------------------------------- */

/* One fixture's items: corner 0 is the main fixture, k >= 1 variant k.
 * Every fixture holds two items exactly at T (the trap's corner) and one
 * at T - 1 (the constant shifted down); the main fixture adds one at
 * T + 1; variant 1 (and 4) is all edges, variant 2 (and 5) is stored in
 * descending id order, variant 3 (and 6) has nothing above T.  Ids are
 * unique by construction and stored out of their order (shuffled), so
 * only ORDER BY sorts them. */
struct item {
    long num, qty;
};

static int fill(void *ctx, struct vat_rng *rng, int corner, struct vat_sqlw *w, struct vat_err *e)
{
    const struct question *q = ctx;
    int kind = corner == 0 ? 0 : (corner - 1) % 3 + 1;
    long n = kind == 0 ? (long)vat_rng_range(rng, q->rows_min, q->rows_max)
                       : (long)vat_rng_range(rng, 6, 10);
    struct item *it = vat_xcalloc((size_t)n, sizeof *it);
    long num = 10000;
    for (long i = 0; i < n; i++) {
        /* Every row starts with an id on the task's side of the split
         * (vat_side_next_id): no row of a train fixture is a row of a test
         * fixture (docs/determinism.md). */
        long gap = (long)vat_rng_range(rng, 7, 97);
        num = vat_side_next_id(q->side, "IT-", 5, num + gap);
        it[i].num = num;
        if (i < 2)
            it[i].qty = q->T;
        else if (i == 2)
            it[i].qty = q->T - 1;
        else if (i == 3 && kind != 3)
            it[i].qty = q->T + 1;
        else if (kind == 1)
            it[i].qty = q->T + (long)vat_rng_range(rng, -1, 1);
        else if (kind == 3)
            it[i].qty = (long)vat_rng_range(rng, 0, q->T - 2);
        else
            it[i].qty = (long)vat_rng_range(rng, 0, 100);
    }
    if (kind == 2) /* stored in descending id order */
        for (long i = 0; i < n / 2; i++) {
            struct item x = it[i];
            it[i] = it[n - 1 - i];
            it[n - 1 - i] = x;
        }
    else
        vat_rng_shuffle(rng, it, (size_t)n, sizeof *it);
    int rc = 0;
    for (long i = 0; i < n && rc == 0; i++) {
        char id[32];
        snprintf(id, sizeof id, "IT-%05ld", it[i].num);
        rc = vat_sqlw_insert(w, q->insert, "ti", id, (int64_t)it[i].qty);
    }
    free(it);
    if (rc != 0)
        vat_err_set(e, "skeleton_sql: cannot insert into '%s'", q->table);
    return rc;
}

/* ---- gold, the trap and the second derivation --------------------------------- */

/* The reference query; with strict, the trap (`>` for `>=`). */
static char *build_query(const struct question *q, bool strict)
{
    return vat_xasprintf("SELECT %s\nFROM %s\nWHERE %s %s %ld\nORDER BY %s", q->id, q->table,
                         q->qty, strict ? ">" : ">=", q->T, q->id);
}

static int reference(struct vat_task *t, struct vat_err *e)
{
    return vat_sqlgen_accept_gold(t, build_query(t->priv, false), true, REL_TOL, ABS_TOL, e);
}

/* The rows the question asks for on one fixture, from a plain read of the
 * table (never by the gold query): ids at or above T, sorted in C. */
struct picked {
    json_t *ids;
    long T;
};

static int pick_row(void *ctx, size_t row, const struct vat_sqlgen_cell *cell, struct vat_err *e)
{
    (void)row, (void)e;
    struct picked *p = ctx;
    if (cell[1].type == SQLITE_INTEGER && cell[1].i >= p->T)
        json_array_append_new(p->ids, json_string(cell[0].s));
    return 0;
}

static int cmp_id(const void *a, const void *b)
{
    return strcmp(json_string_value(*(json_t *const *)a), json_string_value(*(json_t *const *)b));
}

static json_t *derive_rows(const void *question, const char *root, const char *rel,
                           struct vat_err *e)
{
    const struct question *q = question;
    struct picked p = {json_array(), q->T};
    const char *want[2] = {q->id, q->qty};
    if (vat_sqlgen_scan_table(root, rel, q->table, want, 2, pick_row, &p, e) != 0) {
        json_decref(p.ids);
        return NULL;
    }
    size_t n = json_array_size(p.ids);
    json_t **v = vat_xcalloc(n + 1, sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = json_incref(json_array_get(p.ids, i));
    qsort(v, n, sizeof *v, cmp_id);
    json_t *rows = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(rows, json_pack("[o]", v[i]));
    free(v);
    json_decref(p.ids);
    return rows;
}

static int confirm(const struct vat_task *t, struct vat_err *e)
{
    return vat_sqlgen_confirm(t, derive_rows, t->priv, REL_TOL, ABS_TOL, e);
}

/* The trap is armed by the data: vat_sqlgen_set_trap proves it returns
 * other rows than gold on the main fixture (the items at T). */
static int trap_answer(struct vat_task *t, struct vat_err *e)
{
    return vat_sqlgen_set_trap(t, build_query(t->priv, true), REL_TOL, ABS_TOL, e);
}

/* ---- the prompt ------------------------------------------------------------------ */

/* Both styles (templates/prompt.h has the grammar).  Slots: 'd' the
 * columns, 'q' the question, 'r' the rules (explicit); every slot varies
 * over four phrasings at least (tests/test_prompt.c). */
static const char *const d_explicit[] = {
    "Columns: `{id}` is the item's id (text, unique); `{qty}` the units in stock, an integer.",
    "`{table}.{id}` identifies an item (text); `{table}.{qty}` is how many units are in stock.",
    "About the columns: `{id}` (text) names the item and `{qty}` (integer) counts its units "
    "in stock.",
    "[[Each row is one item|One row per item]]: `{id}`, its id as text, and `{qty}`, the "
    "whole units on hand.",
};
static const char *const q_explicit[] = {
    "Task: write one SQLite SELECT statement that lists the `{id}` of every item whose `{qty}` "
    "is {T} or more (`{qty}` >= {T}).",
    "Which SQLite SELECT returns the `{id}` of each item with `{qty}` >= {T}?",
    "Give a SQLite query returning the ids (`{id}`) of the items with at least {T} units "
    "(`{qty}` >= {T}).",
    "[[Write|Give]] one SELECT (SQLite) over `{table}`: the `{id}` of every item with `{qty}` "
    ">= {T}.",
};
static const char *const r_explicit[] = {
    "[[An item exactly at|Items exactly at|An item whose `{qty}` equals]] {T} counts. Return "
    "one column, `{id}`, one row per such item, [[ordered|sorted]] by `{id}` ascending.",
};
static const char *const d_natural[] = {
    "`{table}` is our stock list: `{id}` is the item and `{qty}` how many units we hold.",
    "Each row of `{table}` is one item we stock: its code in `{id}`, units on hand in `{qty}`.",
    "[[In|Inside]] `{table}`, `{id}` names an item and `{qty}` is the number of units in stock.",
    "`{table}` has one row per item: `{id}` (the code) and `{qty}` (units we have).",
};
static const char *const q_natural[] = {
    "Could you list the items we hold {atleast} units of? Just their `{id}`, sorted by it.",
    "[[For the reorder review|For the stock check|Before the audit]] I need the `{id}` of "
    "every item with {atleast} units, in `{id}` order.",
    "Which items do we have {atleast} units of? Give me their `{id}`, in order of `{id}`.",
    "Can you pull the `{id}` of each item with {atleast} units in stock, sorted by `{id}`?",
};
/* Phrases the explicit prompt uses to name or avoid the trap: never in a
 * natural prompt (tests/test_prompt.c). */
static const char *const giveaways[] = {">=", "exactly at", "equals", "counts.", NULL};
/* The data's corner, which a natural prompt never describes. */
static const char *const defects[] = {"on the threshold", "at the boundary", "strictly", NULL};
static const char *const answer_columns[] = {NULL};
static const char *const states_threshold[] = {"at least {}", "{} or more", NULL};
static const struct vat_convention conventions[] = {
    {"threshold", states_threshold},
    {NULL, NULL},
};

static int build_prompt(struct vat_task *t, const struct question *q, struct vat_err *e)
{
    struct vat_buf b = VAT_BUF_INIT;
    char Ts[24];
    snprintf(Ts, sizeof Ts, "%ld", q->T);
    bool nat = vat_prompt_natural(t);
    /* the convention's words, with T in place of "{}" */
    struct vat_buf atleast = VAT_BUF_INIT;
    if (nat) {
        const char *s = vat_prompt_state(t, "threshold"), *p = strstr(s, "{}");
        vat_buf_putn(&atleast, s, p ? (size_t)(p - s) : strlen(s));
        if (p)
            vat_buf_printf(&atleast, "%s%s", Ts, p + 2);
    }
    const char *kv[] = {"table", q->table, "id", q->id, "qty", q->qty, "T", Ts,
                        "atleast", nat ? atleast.data : "",
                        "topic", "[[our stock|the warehouse|the inventory]]", NULL};
    vat_prompt_open(&b, t, kv);
    if (vat_sqlgen_prompt_data(&b, t, &q->table, 1,
                               "[[a stock table|the stock list of a warehouse|one table of "
                               "items in stock]]",
                               e) != 0) {
        vat_buf_release(&atleast);
        vat_buf_release(&b);
        return -1;
    }
    if (nat)
        VAT_PROMPT_PUT(&b, t, 'd', d_natural, kv);
    else
        VAT_PROMPT_PUT(&b, t, 'd', d_explicit, kv);
    vat_buf_puts(&b, "\n\n");
    if (nat) {
        VAT_PROMPT_PUT(&b, t, 'q', q_natural, kv);
    } else {
        VAT_PROMPT_PUT(&b, t, 'q', q_explicit, kv);
        vat_buf_putc(&b, ' ');
        VAT_PROMPT_PUT(&b, t, 'r', r_explicit, kv);
    }
    vat_buf_release(&atleast);
    vat_buf_puts(&b, "\n\n");
    vat_sqlgen_prompt_close(&b, t);
    t->prompt = vat_buf_detach(&b);
    return 0;
}

/* ---- the template callbacks -------------------------------------------------------- */

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
    decode(q, vat_task_question(t, N_QUESTIONS));
    q->schema = vat_xasprintf("CREATE TABLE %s (\n    %s TEXT PRIMARY KEY,\n    %s INTEGER NOT "
                              "NULL\n)",
                              q->table, q->id, q->qty);
    q->insert = vat_xasprintf("INSERT INTO %s (%s, %s) VALUES (?1, ?2)", q->table, q->id, q->qty);
    if (vat_sqlgen_write_table(t, rng, q->schema, &q->table, fill, q, e) != 0)
        return -1;
    t->params = json_pack("{s:s, s:s, s:s, s:I}", "table", q->table, "id_column", q->id,
                          "quantity_column", q->qty, "threshold", (json_int_t)q->T);
    return build_prompt(t, q, e);
}

const struct vat_template vat_tmpl_skeleton_sql = {
    .version = VAT_TEMPLATE_V1,
    .name = "skeleton_sql",
    .family = "sql",
    .answer_kind = "sql",
    .trap = "Using > where >= is right, so the items exactly at the threshold are missed.",
    .summary = "One SQLite SELECT listing, in id order, the items whose quantity is at or "
               "above a threshold.",
    .params = params,
    .default_count = 0, /* no task unless seeds.toml gives [templates.<name>] count */
    .generate = generate,
    .reference = reference,
    .confirm = confirm,
    .trap_answer = trap_answer,
    .check = vat_check_task,
    .giveaways = giveaways,
    .conventions = conventions,
    .defects = defects,
    .answer_columns = answer_columns,
};
