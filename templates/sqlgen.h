/* sqlgen.h — shared machinery for the SQL templates: writing a task's
 * main SQLite fixture plus its held-out variant fixtures from one fill
 * function, rendering a fixture's schema and rows into a prompt, building
 * the sql checker spec, reading tables back as plain rows (for second
 * derivations), running a query on every fixture of a task, and comparing
 * result rows with tolerance.
 * Also the customers-and-orders plan the order-count templates
 * (sql_order_counts, sql_paid_order_counts) draw their fixtures from, and
 * their second derivation (vat_sqlgen_count_orders).
 * Exports struct vat_sqlgen_set, vat_sqlgen_fill_fn, the plan structs and
 * the vat_sqlgen_* functions.
 *
 * How an SQL template uses it:
 *   generate:  fill a struct vat_sqlgen_set (schema, tables, a fill
 *              function that inserts one fixture's rows given a corner-case
 *              selector) and call vat_sqlgen_write_set; render the main
 *              fixture into the prompt with vat_sqlgen_render; build the
 *              spec with vat_sqlgen_spec.
 *   reference: run the gold query on every fixture with vat_sqlgen_run_all
 *              and make sure the variants discriminate
 *              (vat_sqlgen_variants_differ).
 *   confirm:   read each fixture with vat_sqlgen_read_table, aggregate in
 *              C, and compare with the gold rows via vat_sqlgen_rows_equal. */
#ifndef VAT_SQLGEN_H
#define VAT_SQLGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "rng.h"
#include "sqlio.h"
#include "task.h"
#include "vat.h"

/* Limits written into every sql checker spec built here, so the
 * verifiers table records them.  The fixtures are small (hundreds of
 * rows) and a correct query needs a few thousand steps on all of a task's
 * fixtures together (about 100,000 with every template at its largest);
 * the budget, one per check, leaves room for clumsy but honest queries
 * while stopping runaway recursive CTEs.  Same values as the checker's
 * defaults (the most a spec may ask for). */
#define VAT_SQLGEN_STEP_BUDGET 1000000
#define VAT_SQLGEN_MAX_ROWS 10000
#define VAT_SQLGEN_MAX_BYTES (8 * 1024 * 1024)

/* Inserts the rows of one fixture into the open writer w (its schema has
 * already been created).  corner is 0 for the main fixture and k (1-based)
 * for variant k; the template maps it to its corner cases.  rng is the
 * fixture's own stream.  Returns 0, or -1 with e set. */
typedef int (*vat_sqlgen_fill_fn)(void *ctx, struct vat_rng *rng, int corner,
                                  struct vat_sqlw *w, struct vat_err *e);

struct vat_sqlgen_set {
    const char *schema_sql;     /* CREATE TABLE statements, run on each fixture */
    const char *const *tables;  /* the tables the question reads, in order      */
    size_t ntables;
    int nvariants;              /* held-out variants: <id>.v1.sqlite ...        */
    vat_sqlgen_fill_fn fill;
    void *ctx;                  /* passed to fill                               */
};

/* Writes the main fixture <id>.sqlite (corner 0, drawn from rng) and
 * variants <id>.v1.sqlite .. <id>.vN.sqlite (corner k, each drawn from its
 * own stream "variant<k>" of the task, so the main fixture does not depend
 * on how many variants there are), and registers them on t (role "main" /
 * "variant", format "sqlite") with rows (all tables) and "table.column"
 * names read back from the written file.  Returns 0, or -1 with e set. */
int vat_sqlgen_write_set(struct vat_task *t, struct vat_rng *rng, const struct vat_sqlgen_set *s,
                         struct vat_err *e);

/* Appends to b the schema of each table (its CREATE statement as stored
 * in sqlite_master, ended by ';') and its rows as one multi-row INSERT
 * statement with SQL literals, read from root/rel as written.  The row
 * text of all tables together is kept within max_bytes (the schema is
 * always shown): when it does not fit, each table shows as many leading
 * rows as its share allows and a comment line says how many of how many
 * rows are shown.  *truncated (if not NULL) says whether any row was left
 * out.  Returns 0, or -1 with e set. */
int vat_sqlgen_render(const char *root, const char *rel, const char *const *tables,
                      size_t ntables, size_t max_bytes, struct vat_buf *b, bool *truncated,
                      struct vat_err *e);

/* generate()'s fixtures for a question over one table: the main fixture
 * and as many held-out variants as the task's "variants" param says,
 * written by fill over schema_sql (vat_sqlgen_write_set), then t->spec
 * for rows compared in order and exactly (vat_sqlgen_spec).  0, or -1
 * with e set. */
int vat_sqlgen_write_table(struct vat_task *t, struct vat_rng *rng, const char *schema_sql,
                           const char *const *table, vat_sqlgen_fill_fn fill, void *ctx,
                           struct vat_err *e);

/* Returns a new sql checker spec for t: checker "sql", dialect "sqlite",
 * fixtures (every fixture path of t, main first), tables, ordered,
 * rel_tol, abs_tol and the VAT_SQLGEN_* limits.  reference() adds
 * "reference_sql". */
json_t *vat_sqlgen_spec(const struct vat_task *t, const char *const *tables, size_t ntables,
                        bool ordered, double rel_tol, double abs_tol);

/* Reads every row of table from root/rel (SELECT *, in storage order) as
 * a JSON array of arrays (integers, reals, strings, null; blobs as
 * strings); *columns (if not NULL) receives the array of column names.
 * Returns NULL with e set on failure. */
json_t *vat_sqlgen_read_table(const char *root, const char *rel, const char *table,
                              json_t **columns, struct vat_err *e);
/* Returns the index of the column called name in a columns array, or -1. */
int vat_sqlgen_col(const json_t *columns, const char *name);

/* One value of a row read by vat_sqlgen_scan_table.  type is SQLite's
 * (SQLITE_INTEGER: i; SQLITE_FLOAT: d; SQLITE_TEXT or SQLITE_BLOB: the n
 * bytes at s, NUL-terminated, valid during the call; SQLITE_NULL). */
struct vat_sqlgen_cell {
    int type;
    int64_t i;
    double d;
    const char *s;
    size_t n;
};
/* Called once per row with the values of the columns asked for, in the
 * order asked; row counts from 0.  0 to go on, -1 (e set) to stop. */
typedef int (*vat_sqlgen_row_fn)(void *ctx, size_t row, const struct vat_sqlgen_cell *cell,
                                 struct vat_err *e);
/* Reads every row of table from root/rel as vat_sqlgen_read_table does
 * (SELECT *, in storage order, columns found by their exact names) and
 * hands fn the nwant columns named in want (at most 16), without building
 * JSON.  0, or -1 with e set: a column missing, a failed read, or fn's
 * -1. */
int vat_sqlgen_scan_table(const char *root, const char *rel, const char *table,
                          const char *const *want, int nwant, vat_sqlgen_row_fn fn, void *ctx,
                          struct vat_err *e);

/* Runs query on every fixture of t through the sql sandbox (vat_sql_run
 * with t->spec) and returns an array with one result (array of rows) per
 * fixture, in fixture order.  Returns NULL with e naming the fixture and
 * the verdict when a run fails. */
json_t *vat_sqlgen_run_all(const struct vat_task *t, const char *query, struct vat_err *e);

/* Compares two result sets (arrays of rows): same row count, same column
 * count, numbers (integer or real) equal within tolerance, strings
 * byte-exact, null only equal to null.  ordered compares position by
 * position, otherwise as multisets.  Returns true when they agree; else
 * false with a short description in why (if not NULL). */
bool vat_sqlgen_rows_equal(const json_t *want, const json_t *got, bool ordered, double rel_tol,
                           double abs_tol, char *why, size_t cap);

/* Makes gold (taken: freed on failure) the task's gold query: records it
 * as the spec's "reference_sql", proves it admissible for the SQL family
 * (vat_sql_gold_admissible) and its rows on every variant different from
 * the main fixture's (vat_sqlgen_variants_differ), then sets t->gold.
 * 0, or -1 with e set. */
int vat_sqlgen_accept_gold(struct vat_task *t, char *gold, bool ordered, double rel_tol,
                           double abs_tol, struct vat_err *e);

/* Fails (-1, e set) when some variant's result equals the main fixture's
 * result: such a variant cannot tell a hard-coded answer from a real one.
 * results is what vat_sqlgen_run_all returned. */
int vat_sqlgen_variants_differ(const struct vat_task *t, const json_t *results, bool ordered,
                               double rel_tol, double abs_tol, struct vat_err *e);

/* Appends s as an SQL string literal ('...' with quotes doubled). */
void vat_sqlgen_put_literal(struct vat_buf *b, const char *s);

/* The second derivation of an SQL task's rows on one fixture, computed
 * from plain row reads (never by the gold query): a new JSON array of
 * rows, or NULL with e set. */
typedef json_t *(*vat_sqlgen_derive_fn)(const void *question, const char *root, const char *rel,
                                        struct vat_err *e);
/* confirm() for SQL templates: on every fixture of t, the rows derive()
 * computes must equal what t->gold returns in the sandbox (ordered as
 * t->spec says, within the tolerances).  0, or -1 naming the fixture. */
int vat_sqlgen_confirm(const struct vat_task *t, vat_sqlgen_derive_fn derive,
                       const void *question, double rel_tol, double abs_tol, struct vat_err *e);
/* trap_answer() for SQL templates: installs trap_sql (taken over) as
 * t->trap once it is shown to return other rows than gold on the main
 * fixture, so the trap is armed by the data, not assumed.  0, or -1 (the
 * query freed). */
int vat_sqlgen_set_trap(struct vat_task *t, char *trap_sql, double rel_tol, double abs_tol,
                        struct vat_err *e);

/* ---- customers and their orders (the order-count templates) -------------- */

struct vat_sqlgen_cust {
    int64_t num;      /* the id, or the number in the code            */
    char name[64];
    const char *city; /* NULL sometimes                               */
    int32_t signup;
};

/* An order's customer: an index into the customers, or one of these. */
#define VAT_SQLGEN_CUST_NULL (-1)
#define VAT_SQLGEN_CUST_UNKNOWN (-2)

struct vat_sqlgen_ord {
    int cust;
    int64_t unknown; /* the id of an unknown customer (CUST_UNKNOWN) */
    int32_t day;
    int32_t secs;    /* time of day */
    int channel;
    int64_t cents;
    int seq;
    int status;      /* the template's own status index (0 unless it sets one) */
};

/* The days a plan's orders fall in, and the question's date window. */
struct vat_sqlgen_window {
    int32_t span_lo, span_hi; /* days the fixtures' orders fall in          */
    int32_t lo, hi;           /* the window, inclusive (INT32_MIN/MAX: open) */
    bool none;                /* no window: every day is in it              */
};

/* One fixture's customers and orders before they are written.  The
 * template sets w and n_channels (how many sales channels it names) and
 * leaves the rest zero. */
struct vat_sqlgen_plan {
    struct vat_sqlgen_cust *c;
    size_t nc;
    struct vat_sqlgen_ord *o;
    size_t no, cap;
    struct vat_sqlgen_window w;
    size_t n_channels;
};

/* Appends an order of customer cust on day (time, channel and amount
 * drawn from rng). */
void vat_sqlgen_add_order(struct vat_sqlgen_plan *p, struct vat_rng *rng, int cust, int32_t day);
/* A day of the span inside (want_in) or outside the window. */
int32_t vat_sqlgen_draw_day(const struct vat_sqlgen_plan *p, struct vat_rng *rng, bool want_in);
/* Draws nc customers with increasing ids (gaps between them; coded ids
 * start higher) and names, two of them sharing a name.  Each id is one
 * whose key (vat_sqlgen_fmt_key with coded and prefix) side owns
 * (vat_side_owns): a customer row is never a row of the other side. */
void vat_sqlgen_draw_customers(struct vat_sqlgen_plan *p, bool coded, const char *prefix,
                               int side, struct vat_rng *rng, size_t nc);
/* The first id from id on whose key side owns (vat_side_owns): row ids of
 * the SQL fixtures (customers, orders) on their task's side. */
int64_t vat_sqlgen_side_id(int side, bool coded, const char *prefix, int64_t id);
/* The days next to every edge of the window, into out; how many.  Orders
 * there kill a query whose bound is off by one day or uses the wrong
 * comparison. */
size_t vat_sqlgen_boundary_days(const struct vat_sqlgen_plan *p, int32_t out[4]);
/* An id no customer of p has: between two customers or past the last. */
int64_t vat_sqlgen_unknown_id(const struct vat_sqlgen_plan *p, struct vat_rng *rng);

/* Gives role r to k customers of roles[0..nc) that have none (0), drawn
 * one per statement from rng (at most 1000 tries). */
void vat_sqlgen_mark_roles(int *roles, size_t nc, struct vat_rng *rng, size_t k, int r);
/* qsort order of a plan's orders: day, second, then the order drawn. */
int vat_sqlgen_cmp_order(const void *a, const void *b);
/* A customer key as stored: "<prefix><num:05>" when coded, else the
 * number (out holds 32 bytes). */
void vat_sqlgen_fmt_key(bool coded, const char *prefix, int64_t num, char out[32]);
/* Inserts customer c with the prepared statement text stmt (key, name,
 * city, signup date).  0, or -1 with the writer's error. */
int vat_sqlgen_insert_customer(struct vat_sqlw *w, const char *stmt, bool coded,
                               const char *prefix, const struct vat_sqlgen_cust *c);

/* What the order-count templates' second derivation counts: for every
 * customer of ctable, the orders of otable whose fk is the customer's key,
 * whose date_col (its first ten characters, 'YYYY-MM-DD') falls in [lo, hi]
 * and, when status_col is set, whose status is exactly 'paid'. */
enum vat_sqlgen_count_order {
    VAT_SQLGEN_ID_ASC,     /* customer key ascending                   */
    VAT_SQLGEN_ID_DESC,    /* customer key descending                  */
    VAT_SQLGEN_COUNT_DESC, /* count descending, then key ascending     */
    VAT_SQLGEN_COUNT_ASC   /* count ascending, then key ascending      */
};

struct vat_sqlgen_count_query {
    const char *ctable, *key, *name_col;
    const char *otable, *fk, *date_col, *status_col;
    int32_t lo, hi; /* the window, inclusive days */
    enum vat_sqlgen_count_order order;
    bool with_name; /* the name is the second output column */
};

/* The rows the question asks for, counted in C over plain reads of the
 * two tables of root/rel (vat_sqlgen_read_table): [key, (name,) count] per
 * customer, in the order asked.  NULL with e set when a table or column is
 * missing or an order has no readable date. */
json_t *vat_sqlgen_count_orders(const struct vat_sqlgen_count_query *c, const char *root,
                                const char *rel, struct vat_err *e);

/* ---- the family's prompt sentences, in the task's style ------------------- */

/* The result of the order-count templates: "Return exactly N columns, in
 * this order:" and the numbered columns (key, name when with_name, count),
 * then one row per customer in the order asked (slot 'o'). */
void vat_sqlgen_prompt_count_columns(struct vat_buf *b, struct vat_task *t,
                                     const struct vat_sqlgen_count_query *c,
                                     const char *count_name);
/* The opening of an SQL task (slot 'i'): "The SQLite database file
 * `<fixture 0>` holds <what>. The schema and <rows>:" and its variants,
 * then a blank line; what is grammar, rows data ("all the rows"). */
void vat_sqlgen_prompt_intro(struct vat_buf *b, struct vat_task *t, const char *what,
                             const char *rows);
/* The data section of a task's prompt, after its opening: the intro
 * above (what is grammar), the schema and rows of tables as the main
 * fixture holds them within the task's inline cap (vat_sqlgen_render; the
 * leading rows and a line saying so when all do not fit), then a blank
 * line.  Sets t->self_contained: the schema is all a query needs.  0, or
 * -1 with e set. */
int vat_sqlgen_prompt_data(struct vat_buf *b, struct vat_task *t, const char *const *tables,
                           size_t ntables, const char *what, struct vat_err *e);
/* The closing every SQL task shares: the query also runs on held-out
 * databases of the same schema (slot 'h'), then the answer's form, one
 * SELECT statement (slot 'a').  Ends with a newline. */
void vat_sqlgen_prompt_close(struct vat_buf *b, struct vat_task *t);

#endif
