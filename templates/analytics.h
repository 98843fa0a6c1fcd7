/* analytics.h — helpers shared by the analytics templates (grouped_sum,
 * grouped_mean, grouped_count, filtered_total, top_n, ...), so that a
 * template file holds only what is particular to its question:
 *   - writing a task's CSV fixture and recording it (rows, columns);
 *   - reading a CSV fixture back with its header checked;
 *   - the prompt's data section (inline CSV up to t->inline_max_bytes, else
 *     the header and the leading rows that fit, always naming the file);
 *   - the value checker spec (shape, tolerances, ordered/unique) and the
 *     gold answer installed into t->gold and the spec's "expected";
 *   - a small keyed tally (integer sums and counts in first-seen order)
 *     turned into a JSON object with keys in byte order;
 *   - for confirm(): a CSV fixture loaded into an in-memory SQLite, a query
 *     turned into a JSON value of the answer's shape, and a comparison of
 *     that value with t->gold that names the first difference;
 *   - the steps every analytics template repeats: reading the question's
 *     numbers and names back from t->params, a money cell parsed with a
 *     message naming the record, gold and trap installed from a maker
 *     that may have failed, confirm by SQL then by the planted truth, and
 *     a SQLite fixture opened read-only, checked and queried.
 * Exports the vat_an_* functions and types below. */
#ifndef VAT_ANALYTICS_H
#define VAT_ANALYTICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <sqlite3.h>

#include "csvio.h"
#include "task.h"
#include "vat.h"

/* ---- fixtures ------------------------------------------------------------ */

/* Writes c as the task's CSV fixture at vat_task_fixture_relpath(t, suffix)
 * below t->root and records it with the given role ("main" | "variant"),
 * rows = c->nrows - 1 (row 0 is the header) and the header's names as
 * columns.  Returns the fixture's index in t->fixture[], or -1 with e set. */
int vat_an_write_csv(struct vat_task *t, const struct vat_csv *c, const char *suffix,
                     const char *role, struct vat_err *e);

/* Reads fixture t->fixture[fi] (a CSV) as it lies on disk into c and checks
 * that its first record is exactly cols[0..ncols-1], in order, and that
 * every later record has ncols cells.  0, or -1 with e set (c released). */
int vat_an_read_csv(const struct vat_task *t, int fi, const char *const *cols, size_t ncols,
                    struct vat_csv *c, struct vat_err *e);

/* ---- the prompt ---------------------------------------------------------- */

/* Appends the data section for fixture t->fixture[fi], whose contents are c
 * (the table exactly as written): names the file by its corpus-relative
 * path and its data-row count, then inlines the CSV text in a ```csv block.
 * When the whole text is longer than t->inline_max_bytes, the block holds
 * the header and as many leading records as fit (records are never cut)
 * and the section says how many of the rows are shown.  Returns the number
 * of data rows inlined, and sets t->self_contained to whether every fixture
 * shown so far (fi 0 first) was shown whole. */
size_t vat_an_prompt_csv(struct vat_buf *b, struct vat_task *t, int fi,
                         const struct vat_csv *c);

/* Appends "Numbers are compared with an absolute tolerance of A and a
 * relative tolerance of R" (no full stop), the tolerances in short form. */
void vat_an_prompt_tolerance(struct vat_buf *b, double rel_tol, double abs_tol);

/* ---- checker spec and gold ------------------------------------------------ */

/* The shape of a value answer, as verifiers/verifiers.h reads it. */
struct vat_an_spec {
    /* "number" | "list" | "object" | "object_of_objects" | "object_of_strings" */
    const char *shape;
    const char *items;  /* lists only: "string" | "number"                    */
    bool ordered;       /* lists only                                         */
    bool unique;        /* lists only                                         */
    bool integer;       /* numbers must be integral                           */
    double rel_tol;
    double abs_tol;
};

/* Returns a new value-checker spec (no "expected" yet), members in a fixed
 * order: checker, shape, [items, ordered, unique], integer, rel_tol, abs_tol. */
json_t *vat_an_value_spec(const struct vat_an_spec *s);

/* Installs gold (reference stolen) as the task's answer: t->gold becomes
 * its deterministic JSON text and t->spec's "expected" the value itself.
 * Replaces a previous gold. */
void vat_an_set_gold(struct vat_task *t, json_t *gold);

/* Sets t->trap to the JSON text of v (reference stolen). */
void vat_an_set_trap(struct vat_task *t, json_t *v);

/* ---- keyed tallies -------------------------------------------------------- */

struct vat_an_entry {
    char *key;
    int64_t sum; /* e.g. cents, or the sum of integer ratings */
    long n;      /* how many values were added                */
};

/* Keys in first-seen order until vat_an_tally_sort; lookups are linear,
 * which suits the tens of groups a fixture holds. */
struct vat_an_tally {
    struct vat_an_entry *e;
    size_t n, cap;
};
#define VAT_AN_TALLY_INIT {NULL, 0, 0}

/* Returns the entry for key, adding a zero one when absent. */
struct vat_an_entry *vat_an_tally_get(struct vat_an_tally *t, const char *key);
/* Returns the entry for key, or NULL. */
const struct vat_an_entry *vat_an_tally_find(const struct vat_an_tally *t, const char *key);
/* Adds v to key's sum and one to its count. */
void vat_an_tally_add(struct vat_an_tally *t, const char *key, int64_t v);
/* Sorts the entries by key, bytewise (strcmp). */
void vat_an_tally_sort(struct vat_an_tally *t);
/* Object key -> sum/100.0 as a JSON real (money in cents), keys bytewise. */
json_t *vat_an_tally_cents_json(struct vat_an_tally *t);
/* Object key -> n as a JSON integer, keys bytewise. */
json_t *vat_an_tally_counts_json(struct vat_an_tally *t);
void vat_an_tally_release(struct vat_an_tally *t);

/* ---- second derivation through SQLite ------------------------------------- */

/* How a query's rows become a JSON value:
 *   NUMBER            one row, one numeric column            -> number
 *   LIST              one text column, rows in query order   -> [string...]
 *   OBJECT            (text key, number) rows                -> {key: number}
 *   OBJECT_OF_OBJECTS (text key, text key2, number) rows     -> {key: {key2: number}}
 *   OBJECT_OF_STRINGS (text key, text value) rows            -> {key: string}
 * INTEGER columns give JSON integers, REAL columns JSON reals; a NULL
 * number, key or value, a repeated key or a wrong column count is an
 * error. */
enum vat_an_result {
    VAT_AN_NUMBER,
    VAT_AN_LIST,
    VAT_AN_OBJECT,
    VAT_AN_OBJECT_OF_OBJECTS,
    VAT_AN_OBJECT_OF_STRINGS,
};

/* Reads fixture t->fixture[fi] (a CSV, header on row 0) and loads it into
 * table `table` of an in-memory database holding nothing else (types and
 * blank_is_null as for vat_csv_to_sqlite).  The database is usually the
 * thread's own, refilled for each fixture (struct vat_csv_loader): the
 * caller reads it, may not change it, and hands it back with
 * vat_an_csv_done.  0 with *db open, or -1 with e set. */
int vat_an_csv_sqlite(const struct vat_task *t, int fi, const char *table,
                      const char *const *types, int blank_is_null, sqlite3 **db,
                      struct vat_err *e);
/* Hands back a database from vat_an_csv_sqlite (closing it if it was not
 * the thread's own). */
void vat_an_csv_done(sqlite3 *db);

/* Runs sql on db and shapes its rows as `kind` says.  Returns a new JSON
 * value, or NULL with e set. */
json_t *vat_an_sql_json(sqlite3 *db, const char *sql, enum vat_an_result kind,
                        struct vat_err *e);

/* vat_an_csv_sqlite and vat_an_sql_json in one step (the database handed
 * back afterwards).  Returns a new JSON value, or NULL with e set. */
json_t *vat_an_csv_query(const struct vat_task *t, int fi, const char *table,
                         const char *const *types, int blank_is_null, const char *sql,
                         enum vat_an_result kind, struct vat_err *e);

/* Compares two JSON answers: numbers (integer or real alike) agree under
 * vat_close(rel_tol, abs_tol) (0, 0 demands equality), strings byte for
 * byte, lists item by item in order, objects by the same key set.  0, or
 * -1 with e = "<what>: ... at <path>: want X, got Y". */
int vat_an_agree(const char *what, const json_t *want, const json_t *got, double rel_tol,
                 double abs_tol, struct vat_err *e);

/* Parses t->gold and compares it with derived by vat_an_agree; `how`
 * names the derivation in the message ("sql over the loaded csv").
 * 0, or -1 with e set. */
int vat_an_confirm_gold(const struct vat_task *t, const json_t *derived, const char *how,
                        double rel_tol, double abs_tol, struct vat_err *e);

/* ---- appended: the steps every analytics template repeats ------------------- */

/* t->params[key] as an integer in [lo, hi] into *v.  0, or -1 with
 * e = "<id>: params lack a valid '<key>'". */
int vat_an_param_int(const struct vat_task *t, const char *key, long lo, long hi, long *v,
                     struct vat_err *e);
/* t->params[key] as a number (integer or real) in [lo, hi] into *v.  0, or
 * -1 with e as for vat_an_param_int. */
int vat_an_param_real(const struct vat_task *t, const char *key, double lo, double hi, double *v,
                      struct vat_err *e);
/* t->params[key] as a non-empty string, or NULL with e as for
 * vat_an_param_int. */
const char *vat_an_param_str(const struct vat_task *t, const char *key, struct vat_err *e);

/* Cell (row, col) of c, as vat_an_read_csv read fixture t->fixture[fi],
 * parsed by vat_parse_cents.  0, or -1 with e = "<id>: '<path>' record
 * <row + 1>: <column> '<cell>' is not a decimal with two places", the
 * column named by c's header. */
int vat_an_csv_cents(const struct vat_task *t, int fi, const struct vat_csv *c, size_t row,
                     size_t col, int64_t *cents, struct vat_err *e);

/* Cell (row, col) of c, as vat_an_read_csv read fixture t->fixture[fi],
 * parsed by vat_parse_date ("YYYY-MM-DD", a real date) into a day number.
 * 0, or -1 with e = "<id>: '<path>' record <row + 1>: <column> '<cell>' is
 * not a date YYYY-MM-DD", the column named by c's header. */
int vat_an_csv_date(const struct vat_task *t, int fi, const struct vat_csv *c, size_t row,
                    size_t col, int32_t *days, struct vat_err *e);
/* Cell (row, col) of c, as vat_an_read_csv read fixture t->fixture[fi],
 * as a whole number: an optional '-' and 1 to 18 digits, nothing else (no
 * spaces, sign '+', point or thousands separator).  0, or -1 with e =
 * "<id>: '<path>' record <row + 1>: <column> '<cell>' is not a whole
 * number", the column named by c's header. */
int vat_an_csv_int(const struct vat_task *t, int fi, const struct vat_csv *c, size_t row,
                   size_t col, int64_t *v, struct vat_err *e);

/* Cell (row, col) of c, as vat_an_read_csv read fixture t->fixture[fi],
 * parsed by vat_parse_timestamp ("YYYY-MM-DD HH:MM:SS", a real date and
 * time) into seconds since the epoch.  0, or -1 with e = "<id>: '<path>'
 * record <row + 1>: <column> '<cell>' is not a timestamp YYYY-MM-DD
 * HH:MM:SS", the column named by c's header. */
int vat_an_csv_timestamp(const struct vat_task *t, int fi, const struct vat_csv *c, size_t row,
                         size_t col, int64_t *secs, struct vat_err *e);

/* t->params[key] as a month "YYYY-MM" into *year and *month.  0, or -1
 * with e as for vat_an_param_int. */
int vat_an_param_month(const struct vat_task *t, const char *key, int *year, int *month,
                       struct vat_err *e);

/* Sorts words[0..n-1] in place into byte order and appends them as
 * "`a`, `b` or `c`" (the prompt's list of the values a column holds). */
void vat_an_prompt_words(struct vat_buf *b, const char **words, size_t n);

/* For reference(): installs gold (stolen) by vat_an_set_gold and returns
 * 0.  Returns -1 when gold is NULL (its maker set e), and when `empty` is
 * not NULL and gold is an empty object or list: gold is released and e =
 * "<id>: <empty>" ("the fixture has no paid order"), and when gold does
 * not have the shape t->spec declares (vat_an_gold_shape). */
int vat_an_gold_from(struct vat_task *t, json_t *gold, const char *empty, struct vat_err *e);
/* The kind of a JSON value in words, as a checker spec's shape names
 * kinds: "a number", "a list", "an object of strings", ... (static). */
const char *vat_an_json_kind(const json_t *v);
/* 0 when gold has the shape a value spec declares (any other checker
 * passes), else -1 with e = "<id>: gold <gold> is <its kind>, but the
 * checker spec's shape is '<shape>' (...). Mend: ...".  vat_an_gold_from
 * checks it, so a question whose params change the answer's shape fails
 * naming both. */
int vat_an_gold_shape(const struct vat_task *t, const json_t *spec, const json_t *gold,
                      struct vat_err *e);
/* For trap_answer(): vat_an_set_trap(t, v) and 0, or -1 when v is NULL
 * (its maker set e). */
int vat_an_trap_from(struct vat_task *t, json_t *v);

/* A second derivation as SQL over a CSV fixture loaded into SQLite: the
 * arguments of vat_an_csv_query, and `how` to name it in a disagreement
 * (NULL: "sql over the loaded csv"). */
struct vat_an_query {
    int fi;
    const char *table;
    const char *const *types;
    int blank_is_null;
    const char *sql;
    enum vat_an_result kind;
    const char *how;
};

/* Runs q and compares its value with gold (vat_an_confirm_gold).  0, or -1
 * with e set; a query that fails gives e = "<id>: confirm: <why>". */
int vat_an_confirm_query(const struct vat_task *t, const struct vat_an_query *q, double rel_tol,
                         double abs_tol, struct vat_err *e);
/* Compares derived (stolen: e.g. the answer the generator planted, built
 * from t->priv) with gold (vat_an_confirm_gold, named `how`).  0, or -1
 * with e set. */
int vat_an_confirm_value(const struct vat_task *t, json_t *derived, const char *how,
                         double rel_tol, double abs_tol, struct vat_err *e);

/* One query a SQLite fixture must answer with the single number 0, else
 * the question cannot be answered on the file; `what` says why. */
struct vat_an_sanity {
    const char *sql;
    const char *what;
};

/* Opens fixture t->fixture[fi] (a SQLite file) read-only, runs the n
 * sanity queries, then sql shaped as `kind` (vat_an_sql_json).  Returns a
 * new JSON value, or NULL with e = "<id>: '<path>': <why>". */
json_t *vat_an_db_query(const struct vat_task *t, int fi, const struct vat_an_sanity *checks,
                        size_t n, const char *sql, enum vat_an_result kind, struct vat_err *e);

#endif
