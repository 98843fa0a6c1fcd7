/* tables.h — the corpus tables: one JSON object per line, keys in a
 * fixed order, written per split as out/<table>/{train,test}.jsonl.
 * docs/tables.md documents every column.  Exports the vat_tables_* API. */
#ifndef VAT_TABLES_H
#define VAT_TABLES_H

#include "admit.h"
#include "verifier_row.h"
#include "vat.h"

enum vat_table_id {
    VAT_T_EXPERIENCE,
    VAT_T_FIXTURE_GENERATORS,
    VAT_T_SFT_EXAMPLES,
    VAT_T_ROLLOUTS,
    VAT_T_PREFERENCE_PAIRS,
    VAT_T_VERIFIERS,
    VAT_T_RUBRIC_ITEMS,
    VAT_T_ENV, /* the task as a tool-use environment (templates/expert.h) */
    VAT_T_GRPO,
    VAT_T_SFT_REASONING,
    VAT_N_TABLES
};
extern const char *const vat_table_names[VAT_N_TABLES];

/* VAT_SPLIT_TRAIN, VAT_SPLIT_TEST (core/vat.h), by name */
extern const char *const vat_split_names[VAT_N_SPLITS];

/* The path of a table's split file beneath the root:
 * "out/<table>/<split>.jsonl". */
#define VAT_TABLE_REL_MAX 64
void vat_table_rel(char rel[VAT_TABLE_REL_MAX], int table, int split);

/* One column of a table, as the card's dataset_info.features describes it
 * (and docs/schemas/<table>.schema.json constrains it).  kind: 'v' a value
 * of dtype, 's' a struct of members, 'l' a list of structs of members,
 * 'q' a list of values of dtype.  Lists end with a NULL name. */
struct vat_column {
    const char *name;
    char kind;
    const char *dtype; /* "string" | "int64" | "float64" | "bool" ('v' and 'q') */
    const struct vat_column *members;
    bool nullable;     /* null where the value does not apply */
};
/* Every table's columns, in row order. */
extern const struct vat_column *const vat_table_columns[VAT_N_TABLES];

struct vat_tables {
    struct vat_buf buf[VAT_N_TABLES][VAT_N_SPLITS];
};

/* Appends every row one admitted task contributes, to its split's buffers.
 * Tasks must be appended in task_id order. */
void vat_tables_add_task(struct vat_tables *tb, const struct vat_task *t,
                         const struct vat_replay *r, const char *split);
/* The rubric_items weights (docs/tables.md): a task's items sum to 1.
 * The gate (shape) weighs 0.2 and the score (correctness) 0.6; the
 * remaining 0.2 is the trap's.  A compound task shares it equally between
 * the `trap` item (every mistake at once) and its n armed `trap:<name>`
 * items, 0.2 / (n + 1) each, so each mistake it names counts as much as
 * the naive answer that makes them all. */
#define VAT_RUBRIC_GATE 0.2
#define VAT_RUBRIC_SCORE 0.6
#define VAT_RUBRIC_TRAPS 0.2
static inline double vat_rubric_trap_weight(int n_traps)
{
    return VAT_RUBRIC_TRAPS / (double)((n_traps > 0 ? n_traps : 0) + 1);
}

/* Writes out/<table>/<split>.jsonl below root (temporary file + rename). */
int vat_tables_write(struct vat_tables *tb, const char *root, struct vat_err *e);
void vat_tables_release(struct vat_tables *tb);

/* The format version of the tables' rows (docs/tables.md "Format
 * versions"): bumped whenever a column is added, renamed or re-typed.
 * The card states it.  Independent of VAT_VERSION. */
#define VAT_TABLES_FORMAT 2

/* The canonical JSON text of a JSON text: parsed (any value, duplicate keys
 * refused) and written again by vat's own writer (core/jsonout.c: no
 * whitespace, keys in their order, reals in shortest round-trip form with
 * an integral real keeping ".0").  A new string, or NULL when text is not
 * one JSON value. */
char *vat_json_canonical(const char *text);
/* An answer as the tables carry it (always a string): for value and
 * abstain answers its canonical JSON text, for regex and sql the program
 * text itself.  A new string. */
char *vat_answer_text(const struct vat_task *t, const char *answer);
/* vat_verifier_spec, the reader of a verifiers row, is the checkers'
 * (lib/verifier_row.h); its writer is below. */
/* The inverse: writes spec as a verifiers row's `expected` (canonical JSON
 * text of spec's "expected", null when it has none) and `spec_json` (the
 * rest of spec as JSON text) members. */
struct vat_jw;
void vat_verifier_put_spec(struct vat_jw *w, const json_t *spec);
/* The same two columns stored in row, replacing any already there. */
void vat_verifier_set_spec(json_t *row, const json_t *spec);
/* The prompt text of a row of experience (a string), sft_examples or
 * preference_pairs (a list of messages: the first user message's content).
 * Points into row; NULL when the row holds none. */
const char *vat_row_prompt(const json_t *row);
/* The params of an experience or fixture_generators row, parsed from its
 * params_json (a new reference; NULL when absent or not an object). */
json_t *vat_row_params(const json_t *row);
/* The system message of the grpo and sft_reasoning prompts for a task of
 * answer kind ("value", "abstain", "regex" or "sql"): reason briefly, then
 * give the answer alone in a fenced block tagged json, regex or sql, the
 * form `auto` extraction takes first (static text; docs/tables.md). */
const char *vat_system_prompt(const char *answer_kind);
/* The checker version recorded with a verifier row. */
const char *vat_checker_version(const char *checker);

#endif
