/* ordercounts.h — the order-count family (sql_order_counts,
 * sql_paid_order_counts): an SQLite database of customers and their
 * orders, and the question "every customer with their number of orders,
 * zero included", answered with one SELECT.  What the two templates
 * share lives here, so each template file holds only its question space,
 * its wording and its traps: the names a question is drawn from, the
 * drawn question itself, the schema, the fixture plans of the main
 * fixture and the held-out variants (customers without orders, orders
 * outside the window only, orders on each side of every window edge,
 * guest checkouts and unknown customers, ties, a single active customer),
 * the gold query and its single mistakes, the params row, the prompt's
 * data section and result columns, reference and the second derivation
 * (plain row reads counted in C, vat_sqlgen_count_orders).
 *
 * A template fills a struct vat_oc_kind (how many of the shared name
 * lists it draws from; whether only paid orders count), then in generate:
 *   q = vat_oc_question_new(t, rng, &kind);   the drawn question
 *   ... decode its question number into q (vat_oc_customer_tables, ...);
 *   vat_oc_write(t, rng, q, e);               schema, fixtures, spec, params
 *   vat_oc_prompt_data(&b, t, q, kv, e);      the prompt's data section
 *   ... its own question in both styles ...
 *   vat_oc_prompt_end(&b, t, q);              result columns and closing
 * and reference = vat_oc_reference, confirm = vat_oc_confirm; its traps
 * are vat_oc_query with the mistakes made.
 * Exports struct vat_oc_kind, struct vat_oc_question, the shared name
 * lists and the vat_oc_* functions. */
#ifndef VAT_ORDERCOUNTS_H
#define VAT_ORDERCOUNTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "rng.h"
#include "sqlgen.h"
#include "template.h"
#include "vat.h"

/* ---- the names a question is drawn from ---------------------------------- */

/* The customer table, its key, the column of the orders table that refers
 * to it (the key is sometimes a bare "id"), and the prefix of coded keys. */
struct vat_oc_customer_choice {
    const char *table, *key, *fk, *code_prefix;
};
struct vat_oc_orders_choice {
    const char *table, *id;
};

extern const struct vat_oc_customer_choice vat_oc_customer_tables[9];
/* A template draws from the first vat_oc_kind.n_orders_tables of these. */
extern const struct vat_oc_orders_choice vat_oc_orders_tables[10];
extern const char *const vat_oc_stamp_cols[3];
/* A template draws from the first vat_oc_kind.n_count_names of these. */
extern const char *const vat_oc_count_names[8];
extern const char *const vat_oc_status_cols[3];

enum vat_oc_filter { VAT_OC_NONE, VAT_OC_YEAR, VAT_OC_SINCE, VAT_OC_BEFORE, VAT_OC_RANGE };

/* What sets one template of the family apart from the other. */
struct vat_oc_kind {
    size_t n_orders_tables; /* leading entries of vat_oc_orders_tables drawn from  */
    size_t n_count_names;   /* leading entries of vat_oc_count_names drawn from    */
    /* Only paid orders count: a status column, unpaid orders planted in the
     * window, a day range over timestamps always. */
    bool paid;
};

/* The drawn question: everything the prompt, the gold query, the fixture
 * plans and the second derivation need. */
struct vat_oc_question {
    const struct vat_oc_kind *kind;
    int side; /* the task's (row ids are drawn on it: vat_side_owns) */
    const char *ctable, *key, *fk, *code_prefix, *name_col;
    const char *otable, *oid, *date_col, *count_name;
    const char *status_col; /* NULL unless kind->paid                        */
    const char *ca, *oa;    /* the gold query's aliases of the two tables     */
    bool coded;      /* customer ids are text codes "C-00042", else integers */
    bool timestamps; /* 'YYYY-MM-DD HH:MM:SS', else 'YYYY-MM-DD'             */
    bool with_name;  /* the name is the second output column                 */
    enum vat_oc_filter filter;
    enum vat_sqlgen_count_order order;
    int32_t span_lo, span_hi; /* days the fixtures' orders fall in */
    int32_t lo, hi;           /* the window, inclusive days        */
    int year;                 /* VAT_OC_YEAR                       */
    long rows_min, rows_max;
    char *schema, *insert_customer, *insert_order;
};

/* The params every template of the family takes (rows_min and rows_max
 * declared as row counts), ended by {0}. */
extern const struct vat_param vat_oc_params[];

/* Draws the question of task t from rng with the task's params (rows,
 * hardness) and installs it as t->priv (freed with the task).  The
 * template then replaces the names its gold query spells with the ones
 * its question number decodes to (vat_task_question). */
struct vat_oc_question *vat_oc_question_new(struct vat_task *t, struct vat_rng *rng,
                                            const struct vat_oc_kind *kind);

/* Writes the schema, the main fixture and the variants (each plan from its
 * own stream), and sets t->spec and t->params.  0, or -1 with e set. */
int vat_oc_write(struct vat_task *t, struct vat_rng *rng, struct vat_oc_question *q,
                 struct vat_err *e);

/* "YYYY-MM-DD HH:MM:SS" or "YYYY-MM-DD": how the order date is written. */
const char *vat_oc_date_format(const struct vat_oc_question *q);

/* ---- the gold query and its single mistakes ------------------------------ */

enum {
    VAT_OC_M_WHERE = 1,  /* the order conditions in WHERE: an inner join    */
    VAT_OC_M_STAR = 2,   /* COUNT(*) over the LEFT JOIN: 1 for no orders     */
    VAT_OC_M_STATUS = 4, /* no status filter: unpaid orders counted          */
    VAT_OC_M_WINDOW = 8, /* timestamps compared with the bare dates as text  */
};

/* The reference query with the mistakes in m (VAT_OC_M_* bits) made: 0 is
 * gold.  A new string. */
char *vat_oc_query(const struct vat_oc_question *q, int m);

/* reference(): the gold query, proven on every fixture. */
int vat_oc_reference(struct vat_task *t, struct vat_err *e);
/* confirm(): the rows counted in C over plain row reads of every fixture
 * equal what gold returns. */
int vat_oc_confirm(const struct vat_task *t, struct vat_err *e);

/* ---- the prompt ----------------------------------------------------------- */

/* The prompt's opening (kv's "topic", vat_prompt_open), the introduction
 * of the two tables and their schema and rows (cut to the inline cap,
 * saying so).  Sets t->self_contained: the schema is all a query needs.
 * 0, or -1 with e set. */
int vat_oc_prompt_data(struct vat_buf *b, struct vat_task *t, const struct vat_oc_question *q,
                       const char *const *kv, struct vat_err *e);
/* The result's columns and order, then the closing every SQL task shares;
 * moves b into t->prompt. */
void vat_oc_prompt_end(struct vat_buf *b, struct vat_task *t, const struct vat_oc_question *q);

#endif
