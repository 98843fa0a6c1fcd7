/* verifiers.h — the shared checkers, one per answer kind.  Each scores an
 * untrusted answer against a checker spec (the JSON object stored in the
 * verifiers table), never crashes or hangs on it, and returns a verdict
 * with a stable code.  Exports vat_check_value, vat_check_regex,
 * vat_check_sql, vat_check_abstain and their helpers.
 *
 * Spec members (all kinds): "checker": "value" | "regex" | "sql" | "abstain".
 *
 * value:  "shape": "number" | "list" | "object" | "object_of_objects" | "object_of_strings"
 *                                             (object_of_strings: values compared byte for byte)
 *         "items": "string" | "number"        (list items)
 *         "ordered": bool, "unique": bool     (lists)
 *         "integer": bool                     (integral answers expected; compared by tolerance like any number)
 *         "rel_tol", "abs_tol": number        (|a-b| <= max(rel*max(|a|,|b|), abs))
 *         "expected": the gold JSON value
 * regex:  "dialect": "python-re"
 *         "cases": [{"text": s, "expected": [s...], "heldout": bool}, ...]
 *         "match_limit", "depth_limit", "heap_limit_kib", "max_pattern_bytes"
 * sql:    "dialect": "sqlite"
 *         "fixtures": [relative path, ...]  (main first, then variants)
 *         "tables": [name, ...]             (the only tables READ may touch)
 *         "ordered": bool, "reference_sql": s
 *         "rel_tol", "abs_tol", "step_budget", "max_rows", "max_bytes"
 *         "allow_empty_variants": bool (gold may return no rows on a variant)
 *
 * Held-out cases (a regex case with "heldout": true, an SQL fixture after
 * the first) are hidden from reasons unless the check reveals them: a
 * reason about one names it by number and says how the answer failed
 * (counts, the first match, row or column that differs, a type, an order)
 * but quotes none of its text, matches, rows or values, nor SQLite's
 * message of a run-time error there.  The functions without "_as" hide;
 * the "_as" ones take reveal (true: today's full reasons, for a dataset
 * author).  Examples and the main fixture are shown in the prompt and
 * are quoted either way.
 */
#ifndef VAT_VERIFIERS_H
#define VAT_VERIFIERS_H

#include <stddef.h>

#include <jansson.h>

#include "vat.h"

#define VAT_MAX_ANSWER_BYTES (64 * 1024)
#define VAT_MAX_JSON_DEPTH 32
/* The most fixtures a checker spec names (a task's fixtures: templates/task.h). */
#define VAT_SPEC_MAX_FIXTURES 8

/* Numbers agree: |a-b| <= max(rel_tol*max(|a|,|b|), abs_tol); never ==. */
bool vat_close(double a, double b, double rel_tol, double abs_tol);

/* Scores an answer with the shared verifier the spec's "checker" member
 * names (root: the corpus root SQL fixtures are relative to; task_id only
 * names the task in a message). */
struct vat_verdict vat_check_spec(const json_t *spec, const char *root, const char *task_id,
                                  const char *answer, size_t len);
struct vat_verdict vat_check_spec_as(const json_t *spec, const char *root, const char *task_id,
                                     const char *answer, size_t len, bool reveal);

/* ---- value -------------------------------------------------------------- */
struct vat_verdict vat_check_value(const json_t *spec, const char *answer, size_t len);
/* A value spec read once (shape, tolerances, expected gated), for a task
 * checked many times; never NULL.  The spec must outlive it.  Checks
 * through it give vat_check_value's verdicts, including a bad spec's. */
struct vat_value_prep;
struct vat_value_prep *vat_value_prepare(const json_t *spec);
void vat_value_prep_free(struct vat_value_prep *p);
struct vat_verdict vat_check_value_prepared(const struct vat_value_prep *p, const char *answer,
                                            size_t len);

/* ---- regex -------------------------------------------------------------- */
struct vat_verdict vat_check_regex(const json_t *spec, const char *answer, size_t len);
struct vat_verdict vat_check_regex_as(const json_t *spec, const char *answer, size_t len,
                                      bool reveal);
/* A bounded cache of compiled patterns keyed by the exact pattern text (and
 * the compile mode the subjects ask for), for one task's repeated checks:
 * Python's re caches its compiled patterns the same way.  Safe to share
 * between threads; verdicts and limits are those of vat_check_regex. */
struct vat_rx_cache;
struct vat_rx_cache *vat_rx_cache_new(void);
void vat_rx_cache_free(struct vat_rx_cache *c);
/* The bytes the cache holds now (its compiled patterns and their JIT
 * code), for a caller that bounds its caches' memory. */
size_t vat_rx_cache_bytes(const struct vat_rx_cache *c);
/* A regex spec read once (limits, cases as C strings), checking through
 * cache (NULL: compile every time); never NULL.  The spec and the cache
 * must outlive it.  Verdicts are vat_check_regex's, a bad spec's too. */
struct vat_rx_prep;
struct vat_rx_prep *vat_rx_prepare(const json_t *spec, struct vat_rx_cache *cache);
void vat_rx_prep_free(struct vat_rx_prep *p);
struct vat_verdict vat_check_regex_prepared(const struct vat_rx_prep *p, const char *answer,
                                            size_t len);
struct vat_verdict vat_check_regex_prepared_as(const struct vat_rx_prep *p, const char *answer,
                                               size_t len, bool reveal);
/* Extracts [m.group(0) for m in re.finditer(pattern, text)] into a new JSON
 * array, with the same translation, rejection and limits as the checker.
 * Returns NULL with *v set to the failing verdict (compile/limit/...). */
json_t *vat_regex_extract(const json_t *spec, const char *pattern, size_t plen, const char *text,
                          struct vat_verdict *v);

/* ---- sql ---------------------------------------------------------------- */
/* root is the corpus root the spec's fixture paths are relative to. */
struct vat_verdict vat_check_sql(const json_t *spec, const char *root, const char *answer,
                                 size_t len);
struct vat_verdict vat_check_sql_as(const json_t *spec, const char *root, const char *answer,
                                    size_t len, bool reveal);
/* The same check on the spec's fixture i alone (0 is the main fixture),
 * its reasons labelled as in the full check (`vat check --explain`); the
 * answer's run adds its steps to *work, on the check's one budget. */
struct vat_verdict vat_check_sql_fixture_as(const json_t *spec, const char *root, size_t i,
                                            const char *answer, size_t len, bool reveal,
                                            long long *work);
/* Runs one query in the sandbox on one fixture and returns its rows as a
 * JSON array of arrays (integers, reals, strings, null; blobs as strings),
 * or NULL with *v set.  Used by admission and by the reference step. */
json_t *vat_sql_run(const json_t *spec, const char *root, const char *fixture_rel,
                    const char *query, size_t len, struct vat_verdict *v);
/* The same run as one part of a check whose work so far is *work, in
 * steps (docs/limits.md): the run's work is added, and a check past the
 * spec's step_budget fails (sql_budget) without running once it is spent.
 * `vat check --explain` runs an answer on every fixture on one budget. */
json_t *vat_sql_run_counted(const json_t *spec, const char *root, const char *fixture_rel,
                            const char *query, size_t len, long long *work,
                            struct vat_verdict *v);
/* Whether a check of spec that spent work steps ran past its budget. */
bool vat_sql_budget_spent(const json_t *spec, long long work);
/* One database image queried many times (libvat's tool-use episodes):
 * spec gives "tables" (the only tables READ may touch) and the limits
 * (step_budget, max_rows, max_bytes); img (n bytes, malloc'd) is taken.
 * Each query passes the checker's gate and runs in the same sandbox, on
 * a pooled read-only connection; max_rows, when not 0, replaces the
 * spec's.  vat_sql_db_query may be called from many threads at once:
 * 0 with *cols (the result's column names) and *rows (as vat_sql_run
 * gives them), or -1 with *v the checker's verdict on the query. */
struct vat_sql_db;
struct vat_sql_db *vat_sql_db_new(const json_t *spec, unsigned char *img, size_t n,
                                  struct vat_verdict *v);
int vat_sql_db_query(struct vat_sql_db *d, const char *q, size_t len, size_t max_rows,
                     json_t **cols, json_t **rows, struct vat_verdict *v);
void vat_sql_db_free(struct vat_sql_db *d);
/* The bytes d holds now: its image and its pooled sandboxes (counted as a
 * prepared check's are: vat_sql_prep_bytes); it grows as queries pool
 * more.  Safe beside running queries. */
size_t vat_sql_db_bytes(struct vat_sql_db *d);
/* The checker_version string: "vat-sql/3 sqlite/3.40.1". */
const char *vat_sql_checker_version(void);
/* Admission check of spec "reference_sql" on every fixture of the spec:
 * it passes the same gate as an answer, uses no LIMIT (outside strings and
 * comments: a LIMIT can cut a tie), gives the same rows on two runs (the
 * second with tables scanned in reverse, so rows placed only by an
 * unspecified scan order differ), and returns at least one row on the
 * main fixture (on variants too unless spec "allow_empty_variants" is
 * true).  Returns 0, or -1 with e saying why. */
int vat_sql_gold_admissible(const json_t *spec, const char *root, struct vat_err *e);

/* Prepared SQL checks (libvat): the task's fixtures read once (their
 * sha256 verified against sha256[i] when sha256 is not NULL: a mismatch or
 * a NULL entry gives VAT_TAMPERED), the reference rows and, when trap is
 * given, the trap's rows on every fixture computed once.  Returns NULL
 * with *v set (internal or tampered).  vat_sql_check_prepared gives the
 * same verdict as vat_check_sql and may be called from many threads at
 * once; *is_trap (may be NULL) tells whether the answer gives the trap's
 * rows on every fixture. */
struct vat_sql_prep;
struct vat_sql_prep *vat_sql_prepare(const json_t *spec, const char *root,
                                     const char *const *sha256, const char *trap,
                                     size_t trap_len, struct vat_verdict *v);
struct vat_verdict vat_sql_check_prepared(struct vat_sql_prep *p, const char *answer,
                                          size_t len, bool *is_trap);
/* The same check; *pure (may be NULL) tells whether the verdict is a pure
 * function of (answer, fixtures) and may be memoized: false when a net of
 * the checker (CPU time, memory) or an internal failure decided it. */
struct vat_verdict vat_sql_check_prepared_pure(struct vat_sql_prep *p, const char *answer,
                                               size_t len, bool *is_trap, bool *pure);
struct vat_verdict vat_sql_check_prepared_as(struct vat_sql_prep *p, const char *answer,
                                             size_t len, bool *is_trap, bool *pure, bool reveal);
/* The same gate and score, for callers that only count them (the
 * strength rule's mutants): the held-out variants are scanned before the
 * main fixture, the code is that of the first fixture found different,
 * rows that differ give no reason, and rows in the wrong order the code
 * wrong_rows, not wrong_order.  A gate failure or a run that fails (a
 * net, the step budget) keeps its reason. */
struct vat_verdict vat_sql_check_prepared_score(struct vat_sql_prep *p, const char *answer,
                                                size_t len);
void vat_sql_prep_free(struct vat_sql_prep *p);
/* Whether p's checks run on its fixtures as one set (a single connection
 * moved between them: every fixture the same schema; see verifiers/sql/vfs.c)
 * rather than on a connection per fixture.  For tests and benchmarks. */
bool vat_sql_prep_uses_fixture_set(const struct vat_sql_prep *p);
/* The bytes p holds now (its fixture images or set, gold and trap rows,
 * and its pooled sandboxes with their page caches and statements), for a
 * caller that bounds its caches' memory; it grows as checks pool more. */
size_t vat_sql_prep_bytes(struct vat_sql_prep *p);
/* How many queries this thread's sandboxes have run (started stepping)
 * so far.  For tests. */
unsigned long vat_sql_runs(void);
/* How many times this thread's sandboxes have compiled a query: prepared
 * afresh, or prepared again by SQLite because what it was compiled
 * against expired (a scan-order pragma, a schema moved).  For tests. */
unsigned long vat_sql_compiles(void);
/* How many connections on a fixture image this thread's sandboxes have
 * opened so far.  For tests. */
unsigned long vat_sql_sandbox_opens(void);
/* How many of those were a spare connection given a new image instead of
 * a connection opened anew (within a draw).  For tests. */
unsigned long vat_sql_sandbox_reimages(void);
/* The work, in steps, of this thread's last SQL check of an answer
 * (vat_check_sql or a prepared check), all its fixtures together: the VM
 * steps its statement ran plus what the bounded built-ins charged, the
 * step budget plus one when it ran past it; 0 when no query ran.  A
 * function of the answer and the task alone (docs/limits.md). */
long long vat_sql_last_work(void);

/* The CSV loader (verifiers/sqlload.c): a spec with "load": {"table": T,
 * "columns": [[name, type], ...]} names CSV fixtures, each loaded into
 * table T (header row = the names, cells bound as text into the declared
 * types, an empty cell NULL) before a query runs on it.  valid: whether
 * load is well formed (why says not).  image: the loaded database as a
 * serialised SQLite image (*img, malloc'd), or -1 with why set. */
bool vat_sql_load_valid(const json_t *load, char *why, size_t cap);
int vat_sql_csv_image(const unsigned char *csv, size_t n, const json_t *load, unsigned char **img,
                      size_t *img_n, char *why, size_t cap);

/* ---- abstain ------------------------------------------------------------ */
/* spec: "answerable": bool, "abstention": the JSON value meaning abstain,
 * and for answerable tasks the value spec members to score the answer. */
struct vat_verdict vat_check_abstain(const json_t *spec, const char *answer, size_t len);
/* An abstain spec prepared once: an answer that is the abstention's
 * compact JSON text (up to surrounding whitespace) gets the verdict the
 * full check gave that text when prepared; any other answer is checked in
 * full.  Never NULL; the spec must outlive it. */
struct vat_abstain_prep;
struct vat_abstain_prep *vat_abstain_prepare(const json_t *spec);
void vat_abstain_prep_free(struct vat_abstain_prep *p);
struct vat_verdict vat_check_abstain_prepared(const struct vat_abstain_prep *p, const char *answer,
                                              size_t len);

#endif
