/* progform.h — the program form of the analytics templates: the
 * same question answered by one SQLite SELECT instead of a JSON value, and
 * checked OJ-style, through the sql checker's sandbox, on the task's CSV
 * fixture and on held-out variant CSVs (same header and generator,
 * different rows, their own corner cases).
 *
 * A template opts in with a `progform` member (struct vat_template, v2)
 * pointing at a struct vat_progform, and the param VAT_PROGFORM_PARAM
 * ("answer_form": "value" | "sql" | "mixed").  The template builds the
 * value form as always; for a task whose form is "sql" the pipeline
 * (src/admit.c) then calls vat_progform_apply, which
 *   - writes the variants <id>.v<k>.csv, each from its own stream
 *     "variant<k>" of the task (the main fixture's draws never shift),
 *   - builds the sql spec: every fixture, "load" (the CSV loader of
 *     verifiers/sqlload.c: table, declared types, blanks as NULL),
 *   - runs the gold query: admissible as for the SQL family, its rows on
 *     the main fixture equal to the value answer (the second derivation),
 *     different from the main fixture's rows on every variant,
 *   - arms the trap query: other rows than gold on every fixture,
 *   - for a compound template (t->traps[]), replaces each named
 *     single mistake's value answer by its SQL (traps_sql), each armed on
 *     every fixture too, so admission and the tables replay programs,
 *   - replaces prompt, spec, gold and trap by their program forms.
 * The form itself is drawn from the task's own stream "form", never from
 * the stream the fixture is drawn from.  A template whose main fixture is
 * a SQLite database (db_table, db_about, variant_db below) keeps it and
 * adds variant databases <id>.v<k>.sqlite with the same schema: no
 * "load" in the spec, the prompt gives the CREATE TABLE statements and
 * rows, and one table takes the task's composed name in both.
 * Exports struct vat_progform, VAT_PROGFORM_PARAM, vat_progform_form,
 * vat_progform_apply, vat_progform_confirm and vat_progform_rows_value. */
#ifndef VAT_PROGFORM_H
#define VAT_PROGFORM_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "analytics.h"
#include "csvio.h"
#include "rng.h"
#include "sqlio.h"
#include "task.h"
#include "vat.h"

/* The param every program-form template lists. */
#define VAT_PROGFORM_PARAM                                                                         \
    {.name = "answer_form", .type = VAT_PARAM_STR, .def_str = "mixed",                             \
     .doc = "value (a JSON answer), sql (one SELECT, checked on variant CSVs) or mixed (each "    \
            "task draws one)"}

/* The names a program-form task spells in its gold program: the table's
 * name, the result's value column, the direction of the order.  Gold
 * programs must differ between tasks (the leak audit refuses one gold
 * program on both sides of the split, and a shard cannot see other
 * tasks), so the pair (table, out) of task i is element i of a seeded
 * permutation of the names space (vat_rng_permute keyed by seed, template
 * and "pf-names"): distinct for every task below VAT_PF_NAME_SPACE(pf) by
 * construction.  The table name composes a region/system prefix, one of
 * the template's base names and a period/stage suffix (32 x base x 32),
 * e.g. "emea_order_export_2024". */
struct vat_pf_names {
    char table[64];
    const char *out;
    bool descending;
};

/* How many tasks of a template get distinct (table, out) names. */
#define VAT_PF_NAME_SPACE(pf) ((uint64_t)1024 * (pf)->ntables * (pf)->nouts)

struct vat_progform;
/* Element q (mod VAT_PF_NAME_SPACE) of the names space, undecorated
 * (descending false): the map the tasks' permutation indexes.  Its
 * injectivity rests on the template's base names: no prefix + base +
 * suffix may spell another combination (tests/test_progform.c checks
 * every template). */
void vat_progform_compose(const struct vat_progform *pf, uint64_t q, struct vat_pf_names *n);

struct vat_progform {
    const char *const *tables;       /* base names the CSV loads as, e.g. "orders" (>= 4) */
    size_t ntables;
    const char *const *outs;         /* names for the result's value column (>= 4)     */
    size_t nouts;
    const char *const *columns;      /* the CSV header, in order                       */
    const char *const *types;        /* the declared type of each column               */
    size_t ncols;
    bool ordered;                    /* the rows' order is part of the answer          */
    enum vat_an_result kind;         /* how gold's rows read as the value answer       */
    double rel_tol, abs_tol;
    int nvariants;                   /* variant CSVs per task (>= 2)                   */
    /* The question in the task's style, in the value form's words, the
     * conventions that decide the answer included (new string; phrasings
     * drawn from t->prompt_rng). */
    char *(*question)(struct vat_task *t);
    /* The answer's shape in the task's style: columns, which rows, order
     * (new string; phrasings drawn from t->prompt_rng). */
    char *(*shape)(struct vat_task *t, const struct vat_pf_names *n);
    /* The gold query and the template's named mistake as SQL (new strings). */
    char *(*gold_sql)(const struct vat_task *t, const struct vat_pf_names *n);
    char *(*trap_sql)(const struct vat_task *t, const struct vat_pf_names *n);
    /* Fills c (empty) with variant k's CSV, header first, drawn from rng;
     * k (1-based) selects the corner cases.  0, or -1 with e set. */
    int (*variant)(const struct vat_task *t, struct vat_rng *rng, int k, struct vat_csv *c,
                   struct vat_err *e);
    /* A template whose main fixture is a SQLite database (join_aggregate)
     * sets these three instead of columns, types and variant; its task's
     * database is used as it is, with no "load" in the spec.  db_table is
     * the database table that takes the task's composed name n->table in
     * the program form: the main database is rewritten with that table
     * renamed (same rows, same order) and the variants are created with
     * the same schema, so gold programs differ between tasks although the
     * value form's table names are fixed.  db_about says what the tables
     * hold, naming n->table (new string); variant_db inserts variant k's
     * rows into w (the schema already created), drawn from rng.  0, or -1
     * with e set. */
    const char *db_table;
    char *(*db_about)(struct vat_task *t, const struct vat_pf_names *n);
    int (*variant_db)(const struct vat_task *t, struct vat_rng *rng, int k,
                      const struct vat_pf_names *n, struct vat_sqlw *w, struct vat_err *e);
    /* Compound templates only (t->n_traps > 0; NULL otherwise): the
     * single mistake called `name` (a t->traps[].name) as SQL (new
     * string), or NULL when the template has no such mistake.  trap_sql
     * stays the combined mistake, t->trap's program. */
    char *(*traps_sql)(const struct vat_task *t, const struct vat_pf_names *n, const char *name);
};

/* The names task t spells in its program form (table, out, direction),
 * whatever its answer form: a value-form task's expert transcript
 * (templates/expert.c) runs the program form's query under them. */
void vat_progform_names(const struct vat_task *t, const struct vat_progform *pf,
                        struct vat_pf_names *n);

/* pf->gold_sql for task t, with the cleaning of its armed trap modules
 * (templates/trapmod.h) prefixed (new string). */
char *vat_progform_gold_sql(const struct vat_task *t, const struct vat_progform *pf,
                            const struct vat_pf_names *n);

/* The task's answer form: "value" or "sql".  The template's "answer_form"
 * param decides; "mixed" draws from the stream "form" of the task (seed,
 * template, index, attempt), even odds.  A task whose main fixture is not
 * a CSV file (a workbook) is always "value".  A task whose value prompt
 * does not show every row (t->self_contained false) is "sql" whatever the
 * param says: no single-turn value prompt asks about rows it hides
 * (docs/difficulty.md). */
const char *vat_progform_form(const struct vat_task *t, const struct vat_progform *pf);

/* Turns an admitted value-form task into its program form (see above).
 * 0, or -1 with e set. */
int vat_progform_apply(struct vat_task *t, const struct vat_progform *pf, struct vat_err *e);

/* confirm() of a task in its program form: the gold query, run in the
 * sandbox on the main fixture, reads as the value answer recorded in the
 * spec ("value_answer").  0, or -1 with e set. */
int vat_progform_confirm(const struct vat_task *t, const struct vat_progform *pf,
                         struct vat_err *e);

/* A query's rows (array of arrays, as the sandbox returns them) read as
 * a value answer of the given kind (as vat_an_sql_json reads a
 * statement).  New value, or NULL with e set. */
json_t *vat_progform_rows_value(const json_t *rows, enum vat_an_result kind, struct vat_err *e);

#endif
