/* tables.h — the seven corpus tables: one JSON object per line, keys in a
 * fixed order, written per split as out/<table>/{train,test}.jsonl.
 * docs/tables.md documents every column.  Exports the vat_tables_* API. */
#ifndef VAT_TABLES_H
#define VAT_TABLES_H

#include "admit.h"
#include "vat.h"

enum vat_table_id {
    VAT_T_EXPERIENCE,
    VAT_T_FIXTURE_GENERATORS,
    VAT_T_SFT_EXAMPLES,
    VAT_T_ROLLOUTS,
    VAT_T_PREFERENCE_PAIRS,
    VAT_T_VERIFIERS,
    VAT_T_RUBRIC_ITEMS,
    VAT_N_TABLES
};
extern const char *const vat_table_names[VAT_N_TABLES];

enum { VAT_SPLIT_TRAIN, VAT_SPLIT_TEST, VAT_N_SPLITS };
extern const char *const vat_split_names[VAT_N_SPLITS];

struct vat_tables {
    struct vat_buf buf[VAT_N_TABLES][VAT_N_SPLITS];
};

/* Appends every row one admitted task contributes, to its split's buffers.
 * Tasks must be appended in task_id order. */
void vat_tables_add_task(struct vat_tables *tb, const struct vat_task *t,
                         const struct vat_replay *r, const char *split);
/* Writes out/<table>/<split>.jsonl below root (temporary file + rename). */
int vat_tables_write(struct vat_tables *tb, const char *root, struct vat_err *e);
void vat_tables_release(struct vat_tables *tb);

/* The gold / trap answer as the tables carry it: the JSON value itself for
 * value and abstain answers, a JSON string for regex and sql. */
json_t *vat_answer_json(const struct vat_task *t, const char *answer);
/* The checker spec of a verifiers row, as the shared verifiers read it
 * (a new reference; NULL when the row holds none).  Every reader of the
 * verifiers table goes through this, so the row's layout lives here. */
json_t *vat_verifier_spec(const json_t *row);
/* The checker version recorded with a verifier row. */
const char *vat_checker_version(const char *checker);

#endif
