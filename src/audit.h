/* audit.h — the leak audit of a built corpus (`vat audit`).  It reads the
 * tables and the fixture files below a corpus root as untrusted
 * input and reports, as findings, everything that crosses the split or
 * repeats within one side, and every row that is not what vat writes; it
 * measures prompt n-gram overlap and fixture-row overlap as figures.
 * Its memory is flat in the size of the corpus: what it compares is
 * sorted on disk (extsort.h) and read back run by run, within
 * VAT_AUDIT_MEMORY_BUDGET (or the caller's budget), and the report does
 * not depend on the budget.
 * Exports enum vat_audit_kind, struct vat_audit_report, struct
 * vat_audit_opts, vat_audit_*, vat_cmd_audit.
 *
 * What counts as the same thing (documented here because findings depend
 * on it):
 *   prompt   lower-case ASCII, runs of white space folded to one space,
 *            no leading or trailing space (vat_audit_normalise_prompt);
 *   program  regex: runs of white space folded to one space, trimmed;
 *            sql: the same, plus comments dropped, ASCII lower-cased
 *            outside '...' literals, no space beside ( ) , and no
 *            trailing ';' (vat_audit_normalise_program);
 *   fixture  the SHA-256 of the file's bytes; its data rows are the CSV
 *            records after the first (the header), or every row of every
 *            table of a SQLite file, compared as 64-bit hashes of their
 *            typed cell values. */
#ifndef VAT_AUDIT_H
#define VAT_AUDIT_H

#include <stddef.h>

#include <jansson.h>

#include "tables.h"
#include "vat.h"

/* Word n-grams used for the prompt overlap figure. */
#define VAT_AUDIT_NGRAM 13
/* A data row held by more fixtures than this is not distinctive: it is
 * left out of the near-duplicate pair counts (and counted as skipped) so
 * one ubiquitous row cannot make the pair count quadratic. */
#define VAT_AUDIT_COMMON_ROW 256

enum vat_audit_kind {
    /* something crosses the split */
    VAT_AUDIT_TASK_ID,          /* a task id on both sides                    */
    VAT_AUDIT_FIXTURE_DIGEST,   /* a fixture or variant digest on both sides  */
    VAT_AUDIT_PROMPT,           /* a normalised prompt on both sides          */
    VAT_AUDIT_GOLD_PROGRAM,     /* a normalised regex / SQL gold on both sides */
    VAT_AUDIT_HELDOUT_STRING,   /* a regex held-out string on both sides      */
    VAT_AUDIT_NEAR_DUPLICATE,   /* > half a fixture's rows in one other-side fixture */
    /* a duplicate within one side */
    VAT_AUDIT_DUP_TASK_ID,      /* a one-row-per-task table repeats a task id */
    VAT_AUDIT_DUP_ROW_ID,       /* fixture_id, rollout_id or item_id repeats  */
    VAT_AUDIT_DUP_FIXTURE_DIGEST,
    VAT_AUDIT_DUP_PROMPT,
    /* the corpus is not what vat writes */
    VAT_AUDIT_MISSING_TABLE,    /* out/<table>/<split>.jsonl cannot be read   */
    VAT_AUDIT_UNPARSABLE,       /* a line that is not one JSON object         */
    VAT_AUDIT_MISSING_ID,       /* a row without task_id or its own row id    */
    VAT_AUDIT_ORDER,            /* a row before its predecessor's task_id     */
    VAT_AUDIT_SPLIT_MISMATCH,   /* the row's split is not its file's          */
    VAT_AUDIT_ORPHAN,           /* a row of a task its side's experience lacks */
    VAT_AUDIT_TASK_ROWS_MISSING, /* an experience task other tables lack (one
                                    finding per task and side)               */
    VAT_AUDIT_UNSAFE_PATH,      /* a path vat_path_is_safe refuses (not opened) */
    VAT_AUDIT_FIXTURE_MISSING,  /* a listed fixture file cannot be read       */
    VAT_AUDIT_FIXTURE_UNREADABLE, /* read, but its rows cannot be parsed      */
    VAT_AUDIT_FIXTURE_SHA256,   /* the recorded sha256 is not the file's      */
    VAT_AUDIT_N_KINDS
};

struct vat_audit_finding {
    enum vat_audit_kind kind;
    char *table;   /* NULL when the finding is not about one table */
    char *split;   /* NULL when not about one side                 */
    char *task_id; /* NULL when no task is known                   */
    char *detail;
};

struct vat_audit_template_overlap {
    char *name;
    long test_prompts, overlap_tasks;
};

struct vat_audit_report {
    size_t max_per_kind;           /* findings kept per kind; the rest are counted */
    struct vat_audit_finding *f;   /* kept findings, in the order a reading of
                                      the corpus meets them (each kind's first
                                      max_per_kind in that order)              */
    size_t nf, capf;
    long count[VAT_AUDIT_N_KINDS]; /* all findings, kept or not                    */
    long findings;

    long tasks[VAT_N_SPLITS];      /* experience rows                              */
    long fixtures[VAT_N_SPLITS];   /* distinct fixture files listed per side       */

    /* Test prompts sharing a word 13-gram with some train prompt, after
     * each template's fixed wording (13-grams in more than half of its
     * prompts) is removed from both. */
    long ngram_test_prompts, ngram_overlap_tasks;
    double ngram_overlap_share;
    struct vat_audit_template_overlap *per_template; /* sorted by name */
    size_t n_templates;

    /* The largest share of one fixture's distinct data rows found in a
     * single fixture on the other side. */
    double max_overlap_share;
    long max_overlap_rows;
    char *max_overlap_a, *max_overlap_b; /* a: the fixture whose share it is */
    long common_rows_skipped;

    /* How varied the prompts are, per template (prompt_stats.h), from the
     * experience rows; NULL when neither experience file could be read. */
    json_t *prompts;
};

/* Prepares r; max_per_kind bounds the findings kept (0: keep none). */
void vat_audit_init(struct vat_audit_report *r, size_t max_per_kind);

/* The memory the audit's sorts hold at most, whatever the corpus: the
 * rest of what it compares waits in temporary files (extsort.h). */
#define VAT_AUDIT_MEMORY_BUDGET ((size_t)128 << 20)
struct vat_audit_opts {
    const char *tmpdir;   /* temporary files (NULL: $TMPDIR, else /tmp) */
    size_t memory_budget; /* bytes of sort records held (0: the default) */
};

/* Audits the corpus below root.  Returns 0 when the audit ran (r->findings
 * says whether it is clean), -1 with e set when root has no out/ directory
 * (an input error, not a finding) or a temporary file cannot be written.
 * Which findings are kept, and the report, do not depend on the budget. */
int vat_audit_run(const char *root, struct vat_audit_report *r, struct vat_err *e);
int vat_audit_run_with(const char *root, const struct vat_audit_opts *o,
                       struct vat_audit_report *r, struct vat_err *e);
void vat_audit_release(struct vat_audit_report *r);

/* Counts a finding of kind k and keeps it when fewer than max_per_kind of
 * its kind are kept (findings of checks outside vat_audit_run: the shard
 * audit, the build's own check; kept in the order added). */
void vat_audit_report_add(struct vat_audit_report *r, enum vat_audit_kind k, int table,
                          int side, const char *task, const char *detail);

/* The stable name of a finding kind ("task_id", "near_duplicate_fixture"). */
const char *vat_audit_kind_name(enum vat_audit_kind k);
/* One finding as {"finding","table","split","task_id","detail"}. */
json_t *vat_audit_finding_json(const struct vat_audit_finding *f);
/* The summary object: counts per kind and the figures (with "prompts"). */
json_t *vat_audit_summary_json(const struct vat_audit_report *r);

/* New strings in the normal forms described at the top of this file;
 * kind is "regex" or "sql" (anything else folds white space only). */
char *vat_audit_normalise_prompt(const char *s);
char *vat_audit_normalise_program(const char *s, const char *kind);

/* `vat audit [--root DIR] [--max-per-kind N]`: prints one JSON line per
 * finding, a summary JSON line, and "audit: clean" or "audit: N findings"
 * on stderr.  Returns 0 clean, 1 findings, 2 usage or input error.  (Also
 * listed in cli.h with the other commands.) */
int vat_cmd_audit(int argc, char **argv);

#endif
