/* sql_latest_status.c — every order's current status from its status log,
 * as one SQLite SELECT.
 *
 * The fixture is one table of status changes: an event id numbering the
 * rows in the order they were written to the log, the order, the status
 * it moved to and when the change took effect.  An order's current status
 * is the status of its latest change by that time; when two changes of an
 * order share the latest time, the one written to the log last (the
 * higher event id) stands.  The answer is one row per order, its id and
 * that status, in order-id order (ascending or descending, as asked).
 *
 * The trap: the latest change taken as the one with the highest event id.
 * Ids follow the log, not the changes, and in every fixture some change
 * was entered after a later one (a backfill): the highest id then names
 * an older status.  Held out: a variant where most orders' changes were
 * imported in reverse, one with ties at the latest time, one of single
 * changes with one long history, so the gold query's every part matters
 * and its mutants die (strength).  Exports vat_tmpl_sql_latest_status. */
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
    {.name = "events_min", .type = VAT_PARAM_INT, .def = 20, .min = 20, .max = 2000,
     .doc = "fewest status changes in the main fixture", .role = VAT_PARAM_ROWS},
    {.name = "events_max", .type = VAT_PARAM_INT, .def = 40, .min = 20, .max = 2000,
     .doc = "most status changes in the main fixture", .role = VAT_PARAM_ROWS},
    {.name = "variants", .type = VAT_PARAM_INT, .def = 3, .min = 2, .max = 6,
     .doc = "held-out variant fixtures per task"},
    {0},
};

/* ---- the question space ----------------------------------------------------- */

static const char *const tables[] = {"order_events",   "order_status_log", "status_changes",
                                     "order_history",  "fulfilment_events", "order_audit",
                                     "order_timeline", "order_status_events"};
static const char *const oid_cols[] = {"order_id", "order_no", "order_ref", "order_code"};
static const char *const status_cols[] = {"status", "new_status", "state", "to_status"};
static const char *const time_cols[] = {"changed_at", "event_time", "occurred_at",
                                        "effective_at", "status_time"};
static const char *const eid_cols[] = {"event_id", "entry_id", "log_id", "change_id"};
static const char *const aliases[] = {"current_status", "latest_status", "status_now",
                                      "last_status"};
/* Every part the gold query spells (names, the status's alias, the
 * direction) is a digit of the question number: tasks 0..N_QUESTIONS-1
 * have distinct golds by construction (vat_task_question).  20,480
 * questions. */
#define N_QUESTIONS                                                                          \
    (VAT_N_OF(tables) * VAT_N_OF(oid_cols) * VAT_N_OF(status_cols) * VAT_N_OF(time_cols) * \
     VAT_N_OF(eid_cols) * VAT_N_OF(aliases) * 2)

struct question {
    int side; /* the task's (event ids are drawn on it: vat_side_owns) */
    const char *table, *oid, *status, *ts, *eid, *alias;
    bool desc;
    long events_min, events_max;
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
    q->oid = oid_cols[vat_question_digit(&k, VAT_N_OF(oid_cols))];
    q->status = status_cols[vat_question_digit(&k, VAT_N_OF(status_cols))];
    q->ts = time_cols[vat_question_digit(&k, VAT_N_OF(time_cols))];
    q->eid = eid_cols[vat_question_digit(&k, VAT_N_OF(eid_cols))];
    q->alias = aliases[vat_question_digit(&k, VAT_N_OF(aliases))];
    q->desc = vat_question_digit(&k, 2) == 1;
}

/* ---- the fixture rows --------------------------------------------------------- */

static const char *const statuses[] = {"placed",    "paid",     "packed",  "shipped",
                                       "delivered", "cancelled", "returned", "refunded"};
/* The histories an order goes through (indexes into statuses, -1 ends). */
#define MAX_PATH 6
static const int paths[][MAX_PATH + 1] = {
    {0, -1},
    {0, 1, -1},
    {0, 1, 2, -1},
    {0, 1, 2, 3, -1},
    {0, 1, 2, 3, 4, -1},
    {0, 5, -1},
    {0, 1, 5, 7, -1},
    {0, 1, 2, 3, 4, 6, -1},
    {0, 1, 3, 4, 6, 7, -1},
};

static int path_len(int p)
{
    int n = 0;
    while (n < MAX_PATH && paths[p][n] >= 0)
        n++;
    return n;
}

/* A path of min to max changes (every length 1..MAX_PATH has one). */
static int draw_path(struct vat_rng *rng, int min, int max)
{
    int p;
    do
        p = (int)vat_rng_below(rng, VAT_N_OF(paths));
    while (path_len(p) < min || path_len(p) > max);
    return p;
}

/* One status change before it is written: its order, its place in the
 * order's history, when it took effect and when it was written to the
 * log (the event ids follow `logged`). */
struct change {
    long order, step;
    int status;
    int64_t at, logged;
};

struct changes {
    struct change *v;
    size_t n, cap;
};

/* How an order's changes reach the log. */
enum entry {
    ENTRY_PROMPT,   /* each written a minute or two after it took effect       */
    ENTRY_BACKFILL, /* one earlier change written after the latest: the trap's */
    ENTRY_TIE,      /* the latest two share their time, written in history order */
    ENTRY_REVERSE   /* the whole history imported at once, latest first        */
};

/* Appends order num's history (path p, starting at start) entered as
 * entry says. */
static void add_order(struct changes *c, struct vat_rng *rng, long num, int p, int64_t start,
                      enum entry entry)
{
    int n = path_len(p);
    if (c->n + (size_t)n > c->cap) {
        c->cap = 2 * c->cap + (size_t)n + 16;
        c->v = vat_xrealloc(c->v, c->cap * sizeof *c->v);
    }
    struct change *h = c->v + c->n;
    int64_t at = start;
    for (int i = 0; i < n; i++) {
        if (i > 0) {
            int64_t gap = vat_rng_range(rng, 600, 3 * 86400);
            at += gap;
        }
        int64_t lag = vat_rng_range(rng, 0, 120);
        h[i] = (struct change){num, i, paths[p][i], at, at + lag};
    }
    if (entry == ENTRY_TIE && n >= 2) {
        h[n - 1].at = h[n - 2].at;
        int64_t lag = vat_rng_range(rng, 1, 240);
        h[n - 1].logged = h[n - 2].logged + lag;
    } else if (entry == ENTRY_BACKFILL && n >= 2) {
        int j = (int)vat_rng_range(rng, 0, n - 2);
        int64_t late = vat_rng_range(rng, 3600, 4 * 86400);
        h[j].logged = h[n - 1].logged + late;
    } else if (entry == ENTRY_REVERSE) {
        int64_t import = h[n - 1].at + vat_rng_range(rng, 86400, 9 * 86400);
        for (int i = 0; i < n; i++)
            h[i].logged = import + (n - 1 - i);
    }
    c->n += (size_t)n;
}

/* The log's order: when written, then order and step (a total order, so
 * the ids never depend on the sort). */
static int cmp_logged(const void *a, const void *b)
{
    const struct change *x = a, *y = b;
    if (x->logged != y->logged)
        return x->logged < y->logged ? -1 : 1;
    if (x->order != y->order)
        return x->order < y->order ? -1 : 1;
    return (x->step > y->step) - (x->step < y->step);
}

/* The corners of one fixture: corner 0 is the main fixture, k >= 1
 * variant k.  Every fixture holds a backfilled order (the trap's corner);
 * the main fixture and variant 1 (and 4) an order of one change and a
 * tie at the latest time (variant 1 more ties); variant 2 (and 5) imports
 * its orders, all but the first two, in reverse (latest change first);
 * variant 3 (and 6) is orders of one change each beside one long history.
 * The main fixture's corners take at most 19 changes, so plain orders
 * then fill it to exactly the drawn count (events_min is 20 at least).
 * The order numbers are drawn apart and given to the histories shuffled,
 * so an order's number says nothing of its corner. */
static void plan(const struct question *q, struct vat_rng *rng, int corner, struct changes *c)
{
    int kind = corner == 0 ? 0 : (corner - 1) % 3 + 1;
    long target = kind == 0 ? (long)vat_rng_range(rng, q->events_min, q->events_max)
                            : (long)vat_rng_range(rng, 10, 16);
    long norders = target + 4;
    long *nums = vat_xcalloc((size_t)norders, sizeof *nums);
    long base = 100000 + (long)vat_rng_below(rng, 700000);
    for (long i = 0; i < norders; i++) {
        long step = (long)vat_rng_range(rng, 1, 60);
        base += step;
        nums[i] = base;
    }
    vat_rng_shuffle(rng, nums, (size_t)norders, sizeof *nums);
    int64_t day0 = (int64_t)vat_date_from_civil(2026, 1, 5) * 86400;
    for (long i = 0; i < norders && (i < 4 || (long)c->n < target); i++) {
        int64_t start = day0 + vat_rng_range(rng, 0, 40 * 86400);
        long left = target - (long)c->n;
        int room = left < 1 ? 1 : left < MAX_PATH ? (int)left : MAX_PATH;
        enum entry entry = ENTRY_PROMPT;
        int p;
        if (i == 0) {
            entry = ENTRY_BACKFILL;
            p = draw_path(rng, 3, MAX_PATH);
        } else if (i == 1) {
            p = kind == 3 ? draw_path(rng, MAX_PATH, MAX_PATH) : 0;
        } else if (i == 2 && kind <= 1) {
            entry = ENTRY_TIE;
            p = draw_path(rng, 2, MAX_PATH);
        } else if (i == 3 && kind == 0) {
            p = draw_path(rng, 4, MAX_PATH);
        } else if (kind == 3) {
            p = 0;
        } else if (kind == 2 && room >= 2) {
            entry = ENTRY_REVERSE;
            p = draw_path(rng, 2, room);
        } else {
            p = draw_path(rng, 1, room);
            if (kind == 1 && vat_rng_chance(rng, 0.5))
                entry = ENTRY_TIE;
        }
        add_order(c, rng, nums[i], p, start, entry);
    }
    free(nums);
    qsort(c->v, c->n, sizeof *c->v, cmp_logged);
}

static int fill(void *ctx, struct vat_rng *rng, int corner, struct vat_sqlw *w, struct vat_err *e)
{
    const struct question *q = ctx;
    struct changes c = {NULL, 0, 0};
    plan(q, rng, corner, &c);
    int64_t id = (int64_t)vat_rng_range(rng, 1000, 90000);
    int rc = 0;
    for (size_t i = 0; i < c.n && rc == 0; i++) {
        char oid[32], at[20];
        snprintf(oid, sizeof oid, "SO-%06ld", c.v[i].order);
        vat_fmt_timestamp(c.v[i].at, at);
        int64_t gap = vat_rng_range(rng, 1, 3);
        /* every row starts with an id on the task's side of the split: no
         * row of a train fixture is a row of a test fixture
         * (docs/determinism.md) */
        id = vat_side_next_id(q->side, "", 0, (long)(id + gap));
        rc = vat_sqlw_insert(w, q->insert, "ittt", id, oid, statuses[c.v[i].status], at);
    }
    free(c.v);
    if (rc != 0)
        vat_err_set(e, "sql_latest_status: cannot insert into '%s'", q->table);
    return rc;
}

/* ---- gold, the trap and the second derivation --------------------------------- */

/* The reference: a change is current when no change of its order is later
 * by (time, event id).  The row value compares time first and the id only
 * on a tie, the order the question gives them. */
static char *gold_query(const struct question *q)
{
    return vat_xasprintf("SELECT e.%s, e.%s AS %s\n"
                         "FROM %s AS e\n"
                         "WHERE NOT EXISTS (SELECT *\n"
                         "                  FROM %s AS l\n"
                         "                  WHERE l.%s = e.%s\n"
                         "                    AND (l.%s, l.%s) > (e.%s, e.%s))\n"
                         "ORDER BY e.%s%s",
                         q->oid, q->status, q->alias, q->table, q->table, q->oid, q->oid, q->ts,
                         q->eid, q->ts, q->eid, q->oid, q->desc ? " DESC" : "");
}

/* The trap: the change with the highest event id taken as the latest. */
static char *trap_query(const struct question *q)
{
    return vat_xasprintf("SELECT e.%s, e.%s AS %s\n"
                         "FROM %s AS e\n"
                         "WHERE e.%s = (SELECT MAX(l.%s) FROM %s AS l WHERE l.%s = e.%s)\n"
                         "ORDER BY e.%s%s",
                         q->oid, q->status, q->alias, q->table, q->eid, q->eid, q->table, q->oid,
                         q->oid, q->oid, q->desc ? " DESC" : "");
}

static int reference(struct vat_task *t, struct vat_err *e)
{
    return vat_sqlgen_accept_gold(t, gold_query(t->priv), true, REL_TOL, ABS_TOL, e);
}

/* The second derivation, from a plain read of the table (never by a
 * query): each order's latest change found in C, times parsed as
 * timestamps rather than compared as text. */
struct latest {
    char *oid, *status;
    int64_t at, eid;
};

struct scan {
    struct latest *v;
    size_t n, cap;
    const char *rel, *table;
};

static int cmp_oid(const void *a, const void *b)
{
    return strcmp(((const struct latest *)a)->oid, ((const struct latest *)b)->oid);
}

static int scan_row(void *ctx, size_t row, const struct vat_sqlgen_cell *cell, struct vat_err *e)
{
    struct scan *s = ctx;
    int64_t at;
    for (int k = 0; k < 3; k++)
        if (cell[k].type != SQLITE_TEXT)
            return vat_err_set(e, "sql_latest_status: '%s' table '%s' row %zu: a text cell is "
                                  "not text",
                               s->rel, s->table, row + 1);
    if (cell[3].type != SQLITE_INTEGER)
        return vat_err_set(e, "sql_latest_status: '%s' table '%s' row %zu: the event id is not "
                              "an integer",
                           s->rel, s->table, row + 1);
    if (vat_parse_timestamp(cell[2].s, &at) != 0)
        return vat_err_set(e, "sql_latest_status: '%s' table '%s' row %zu: '%s' is not a "
                              "timestamp",
                           s->rel, s->table, row + 1, cell[2].s);
    size_t i = 0;
    while (i < s->n && strcmp(s->v[i].oid, cell[0].s) != 0)
        i++;
    if (i == s->n) {
        if (s->n == s->cap) {
            s->cap = 2 * s->cap + 16;
            s->v = vat_xrealloc(s->v, s->cap * sizeof *s->v);
        }
        s->v[s->n++] = (struct latest){vat_xstrdup(cell[0].s), vat_xstrdup(cell[1].s), at,
                                       cell[3].i};
        return 0;
    }
    struct latest *l = &s->v[i];
    if (at > l->at || (at == l->at && cell[3].i > l->eid)) {
        free(l->status);
        l->status = vat_xstrdup(cell[1].s);
        l->at = at;
        l->eid = cell[3].i;
    }
    return 0;
}

static json_t *derive_rows(const void *question, const char *root, const char *rel,
                           struct vat_err *e)
{
    const struct question *q = question;
    struct scan s = {NULL, 0, 0, rel, q->table};
    const char *want[4] = {q->oid, q->status, q->ts, q->eid};
    json_t *rows = NULL;
    if (vat_sqlgen_scan_table(root, rel, q->table, want, 4, scan_row, &s, e) == 0) {
        if (s.n > 0)
            qsort(s.v, s.n, sizeof *s.v, cmp_oid);
        rows = json_array();
        for (size_t k = 0; k < s.n; k++) {
            const struct latest *l = &s.v[q->desc ? s.n - 1 - k : k];
            json_array_append_new(rows, json_pack("[ss]", l->oid, l->status));
        }
    }
    for (size_t k = 0; k < s.n; k++) {
        free(s.v[k].oid);
        free(s.v[k].status);
    }
    free(s.v);
    return rows;
}

static int confirm(const struct vat_task *t, struct vat_err *e)
{
    return vat_sqlgen_confirm(t, derive_rows, t->priv, REL_TOL, ABS_TOL, e);
}

/* Armed by the data: vat_sqlgen_set_trap proves the trap returns other
 * rows than gold on the main fixture (its backfilled order). */
static int trap_answer(struct vat_task *t, struct vat_err *e)
{
    return vat_sqlgen_set_trap(t, trap_query(t->priv), REL_TOL, ABS_TOL, e);
}

/* ---- the prompt ------------------------------------------------------------------ */

/* Both styles (templates/prompt.h has the grammar).  Slots: 'd' the
 * columns, 'q' the question, 'r' the rules (explicit), 'c' the
 * conventions (natural); d, q and a vary over four phrasings at least
 * (tests/test_prompt.c). */
static const char *const d_explicit[] = {
    "Columns: `{eid}` (integer) numbers the rows in the order they were written to the log; "
    "`{oid}` is the order; `{status}` the status it moved to; `{ts}` when that change took "
    "effect ({fmt}).",
    "Each row is one status change: `{oid}` moved to `{status}` at `{ts}` ({fmt}); `{eid}` "
    "counts up as rows are written to the log.",
    "About the columns: `{oid}` names the order, `{status}` is its new status, `{ts}` ({fmt}) "
    "is when the change took effect and `{eid}` is the row's place in the log.",
    "[[One row per status change|Every row is a status change]]: `{eid}`, its log number; "
    "`{oid}`, the order; `{status}`, the status set; `{ts}`, the time it took effect "
    "({fmt}).",
};
static const char *const q_explicit[] = {
    "Task: write one SQLite SELECT statement that returns every order's current status: the "
    "`{status}` of its latest change by `{ts}`.",
    "Which SQLite SELECT returns, for each `{oid}`, the `{status}` of that order's latest "
    "change by `{ts}`?",
    "Give a SQLite query listing each order with its current status, the `{status}` its "
    "latest change (by `{ts}`) set.",
    "[[Write|Give]] one SELECT (SQLite) over `{table}`: for every order, the `{status}` set "
    "by its most recent change, most recent by `{ts}`.",
};
static const char *const r_explicit[] = {
    "[[Latest|Most recent]] goes by `{ts}`, not by the greatest `{eid}`: some changes were "
    "entered after later ones. [[When|If]] two changes of an order share its latest `{ts}`, "
    "the one with the higher `{eid}` counts. Return two columns, `{oid}` and `{alias}` (the "
    "status), one row per order, [[ordered|sorted]] by `{oid}` {dir}.",
};
static const char *const d_natural[] = {
    "`{table}` is our order status log: each row is an order (`{oid}`) moving to a new status "
    "(`{status}`) at the time in `{ts}`; `{eid}` numbers the rows as they were written.",
    "Every row of `{table}` records a status change: the order in `{oid}`, its new status in "
    "`{status}`, when the change took effect in `{ts}` and the row's log number in `{eid}`.",
    "[[In|Inside]] `{table}`, `{oid}` is the order, `{status}` the status it moved to, `{ts}` "
    "when that happened, and `{eid}` counts the rows in the order they were written.",
    "`{table}` has one row per status change: `{oid}` (the order), `{status}` (the new "
    "status), `{ts}` (when it took effect) and `{eid}` (the row's number in the log).",
};
static const char *const q_natural[] = {
    "Could you write a query giving each order's current status, the one set by its most "
    "recent change? One row per order: `{oid}` and the status as `{alias}`, {sorted}.",
    "[[For the support desk|For the customer service screen|For the ops review]] I need "
    "where every order stands now, after its most recent change: `{oid}` and `{alias}`, "
    "{sorted}.",
    "What is the status of each order right now, going by its most recent change? Give me "
    "`{oid}` and `{alias}`, {sorted}.",
    "Can you pull every order's present status, as its most recent change left it? Columns "
    "`{oid}` and `{alias}`, one row per order, {sorted}.",
};
static const char *const c_natural[] = {
    "{tie}",
};
static const char *const sorted_natural[] = {
    "sorted by `{oid}` {order}",
    "[[listed|ordered]] by `{oid}` {order}",
    "[[with the rows|rows]] sorted on `{oid}` {order}",
};
/* Phrases the explicit prompt uses to name or avoid the trap: never in a
 * natural prompt (tests/test_prompt.c). */
static const char *const giveaways[] = {"not by the greatest", "were entered after", "higher `",
                                        NULL};
/* The data's corner, which a natural prompt never describes. */
static const char *const defects[] = {"backfill", "entered late", "out of order", "logged late",
                                      "written late", "imported", NULL};
static const char *const answer_columns[] = {NULL};
static const char *const states_order[] = {"in {} order", NULL};
static const char *const states_ties[] = {
    "If two changes of one order share the latest time, the one written last stands.",
    "When an order's two latest changes carry the same time, the row written last counts.",
    "Two changes of an order at the same latest time: the one written last is current.",
    NULL,
};
static const struct vat_convention conventions[] = {
    {"order", states_order},
    {"ties", states_ties},
    {NULL, NULL},
};

static void put_state(struct vat_buf *out, const char *s, const char *value)
{
    const char *p = strstr(s, "{}");
    vat_buf_putn(out, s, p ? (size_t)(p - s) : strlen(s));
    if (p)
        vat_buf_printf(out, "%s%s", value, p + 2);
}

static void put_question(struct vat_buf *b, struct vat_task *t, const struct question *q)
{
    bool nat = vat_prompt_natural(t);
    const char *dir = q->desc ? "descending" : "ascending";
    struct vat_buf order = VAT_BUF_INIT, sorted = VAT_BUF_INIT;
    if (nat)
        put_state(&order, vat_prompt_state(t, "order"), dir);
    const char *skv[] = {"oid", q->oid, "order", nat ? order.data : "", NULL};
    if (nat)
        VAT_PROMPT_PUT(&sorted, t, 's', sorted_natural, skv);
    const char *kv[] = {"table", q->table, "oid", q->oid, "status", q->status, "ts", q->ts,
                        "eid", q->eid, "alias", q->alias, "dir", dir,
                        "fmt", "YYYY-MM-DD HH:MM:SS", "sorted", nat ? sorted.data : "",
                        "tie", nat ? vat_prompt_state(t, "ties") : "", NULL};
    if (nat)
        VAT_PROMPT_PUT(b, t, 'd', d_natural, kv);
    else
        VAT_PROMPT_PUT(b, t, 'd', d_explicit, kv);
    vat_buf_puts(b, "\n\n");
    if (nat) {
        VAT_PROMPT_PUT(b, t, 'q', q_natural, kv);
        vat_buf_putc(b, ' ');
        VAT_PROMPT_PUT(b, t, 'c', c_natural, kv);
    } else {
        VAT_PROMPT_PUT(b, t, 'q', q_explicit, kv);
        vat_buf_putc(b, ' ');
        VAT_PROMPT_PUT(b, t, 'r', r_explicit, kv);
    }
    vat_buf_release(&order);
    vat_buf_release(&sorted);
}

static int build_prompt(struct vat_task *t, const struct question *q, struct vat_err *e)
{
    struct vat_buf b = VAT_BUF_INIT;
    const char *kv[] = {"topic", "[[our orders|order tracking|the order pipeline]]", NULL};
    vat_prompt_open(&b, t, kv);
    if (vat_sqlgen_prompt_data(&b, t, &q->table, 1,
                               "[[the status log of our orders|one table of order status "
                               "changes|a log of order status changes]]",
                               e) != 0) {
        vat_buf_release(&b);
        return -1;
    }
    put_question(&b, t, q);
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
    q->events_min = vat_task_int(t, "events_min");
    q->events_max = vat_task_int(t, "events_max");
    if (q->events_max < q->events_min)
        q->events_max = q->events_min;
    decode(q, vat_task_question(t, N_QUESTIONS));
    /* The log is indexed by order and time, as a log read this way would
     * be: a history per order then costs its own length, so the gold's
     * NOT EXISTS stays within the check's budget at a level's 2,400
     * changes instead of growing with the square of the log. */
    q->schema = vat_xasprintf("CREATE TABLE %s (\n    %s INTEGER PRIMARY KEY,\n    %s TEXT NOT "
                              "NULL,\n    %s TEXT NOT NULL,\n    %s TEXT NOT NULL\n);\n"
                              "CREATE INDEX %s_by_%s ON %s (%s, %s)",
                              q->table, q->eid, q->oid, q->status, q->ts, q->table, q->oid,
                              q->table, q->oid, q->ts);
    q->insert = vat_xasprintf("INSERT INTO %s (%s, %s, %s, %s) VALUES (?1, ?2, ?3, ?4)",
                              q->table, q->eid, q->oid, q->status, q->ts);
    if (vat_sqlgen_write_table(t, rng, q->schema, &q->table, fill, q, e) != 0)
        return -1;
    t->params = json_pack("{s:s, s:s, s:s, s:s, s:s, s:[ss], s:s, s:s}", "table", q->table,
                          "order_id_column", q->oid, "status_column", q->status,
                          "time_column", q->ts, "event_id_column", q->eid, "output_columns",
                          q->oid, q->alias, "order", q->desc ? "descending" : "ascending",
                          "ties", "the later-written change");
    return build_prompt(t, q, e);
}

const struct vat_template vat_tmpl_sql_latest_status = {
    .version = VAT_TEMPLATE_V1,
    .name = "sql_latest_status",
    .family = "sql",
    .answer_kind = "sql",
    .trap = "Taking the change with the highest event id as the latest, when ids follow the "
            "log and a change entered late names an older status.",
    .summary = "One SQLite SELECT giving every order's current status from a log of status "
               "changes: the status of its latest change by time, ties to the later-written "
               "row, in order-id order.",
    .params = params,
    /* drawn where seeds.toml gives a count: a config written before it
     * (bench/seeds-*.toml) keeps its tasks */
    .default_count = 0,
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
