/* prints.h — the leak audit's fingerprints of a corpus: what the audit
 * compares across the split, per task, as fixed-size records that sort
 * by their bytes.  The build takes them from every task it admits
 * (streamed, on its workers), sorts them on disk (extsort.h) and runs the
 * audit's cross-split checks over them before the corpus is swapped in;
 * a shard build also writes them beside its tables, one sorted file per
 * kind (out/prints/<kind>.bin), so that `vat audit --shards` and
 * `vat merge` find every cross-split collision between any two shards
 * from those files alone, by merging them, without the fixtures.
 *
 * The kinds, and what a record's fingerprint is:
 *   prompts   the first 16 bytes of the SHA-256 of the normalised prompt
 *             (audit.h), once per table holding it (experience,
 *             sft_examples, preference_pairs);
 *   programs  the same of "<kind>:<normalised program>" for a regex or
 *             SQL gold (experience) and a reference query (verifiers);
 *   strings   the same of a regex task's string, held out or shown;
 *   digests   the first 16 bytes of a fixture file's SHA-256;
 *   rows      a fixture's distinct data-row hashes (fxrows.h), with its
 *             number of distinct data rows.
 * A key record is fingerprint[16] side[1] template[2] index[4] aux[1]
 * (aux: the table, the held-out mark, the fixture's number); a row record
 * is hash[8] side[1] template[2] index[4] fixture[1] rows[4]; numbers are
 * big-endian.  A file is one JSON line ({"vat_prints": 1, "kind", "record_bytes",
 * "records", "templates": [names, by number]}) and the records, ascending.
 * Exports struct vat_task_prints, struct vat_prints and the vat_prints_*,
 * vat_task_prints_* functions. */
#ifndef VAT_PRINTS_H
#define VAT_PRINTS_H

#include <stddef.h>
#include <stdint.h>

#include "audit.h"
#include "extsort.h"
#include "vat.h"

enum vat_print_kind {
    VAT_PRINT_PROMPTS,
    VAT_PRINT_PROGRAMS,
    VAT_PRINT_STRINGS,
    VAT_PRINT_DIGESTS,
    VAT_PRINT_ROWS,
    VAT_N_PRINT_KINDS
};
extern const char *const vat_print_kind_names[VAT_N_PRINT_KINDS];

#define VAT_PRINT_KEY_BYTES 24
#define VAT_PRINT_ROW_BYTES 20
/* The folder of a shard's prints, below its root. */
#define VAT_PRINTS_DIR "out/prints"

/* One task's records, made on a build worker after the task is admitted
 * (the fixtures' rows are read there), added to the build's sorts by the
 * writer. */
struct vat_task_prints {
    struct vat_buf rec[VAT_N_PRINT_KINDS];
};

/* Makes t's records: side (VAT_SPLIT_*), tmpl (the template's number in
 * the build's list).  0, or -1 with e set when a fixture of t cannot be
 * read back as the audit reads it. */
int vat_task_prints_make(struct vat_task_prints *tp, const struct vat_task *t, int side,
                         unsigned tmpl, struct vat_err *e);
void vat_task_prints_release(struct vat_task_prints *tp);

/* The records of a build, sorted on disk. */
struct vat_prints {
    struct vat_xsort s[VAT_N_PRINT_KINDS];
    char **tmpl;
    size_t ntmpl;
};

/* Prepares p for the build's templates (names, by number); temporary
 * files in tmpdir, at most budget bytes of records in memory. */
void vat_prints_init(struct vat_prints *p, const char *tmpdir, size_t budget,
                     const char *const *tmpl, size_t ntmpl);
int vat_prints_add(struct vat_prints *p, const struct vat_task_prints *tp, struct vat_err *e);
/* Sorts the records and runs the cross-split checks over them: findings
 * (of the audit's kinds) go to r; with write_root, the sorted files are
 * written below write_root/out/prints as they are read.  0, or -1 with e
 * set when a temporary or written file fails. */
int vat_prints_finish(struct vat_prints *p, const char *write_root, struct vat_audit_report *r,
                      struct vat_err *e);
void vat_prints_release(struct vat_prints *p);

/* The shard audit: merges the prints of the n shard roots (each root's
 * out/prints, read beneath it as untrusted input) kind by kind and runs
 * the same checks into r (tasks and fixtures per side are counted from
 * the experience prompts and the digests).  0, or -1 with e set when a
 * root's prints are missing, malformed, out of order, or name other
 * templates than the first root's. */
int vat_prints_audit(const char *const *roots, size_t n, struct vat_audit_report *r,
                     struct vat_err *e);

#endif
