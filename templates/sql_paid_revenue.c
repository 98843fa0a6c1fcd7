/* sql_paid_revenue.c — the template "sql_paid_revenue": one SQLite table
 * of invoices (invoice id, customer, payment status, amount, issue date;
 * sometimes a due date), and the question "paid revenue per period,
 * ordered by period", answered with one SQL SELECT.  The question is
 * drawn per task: table and column names, the paid status vocabulary and
 * its case, one or two paid values, the period (month, quarter, year),
 * the direction, the stored unit (decimal dollars or integer cents) and
 * the unit asked for.  Checked OJ-style on the main fixture and held-out
 * variants with corner cases (an empty period, a period with only
 * non-paid invoices, paid invoices with NULL amounts, period boundaries,
 * a year wrap, a single invoice).  The trap drops the paid filter.
 * Exports vat_tmpl_sql_paid_revenue. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prompt.h"
#include "sqlgen.h"
#include "template.h"
#include "values.h"
#include "verifiers.h"

#define REL_TOL 0.0
#define ABS_TOL 1e-6
#define MAX_STATUS 6

static const struct vat_param params[] = {
    {"rows_min", VAT_PARAM_INT, 24, NULL, 12, 2000, "fewest invoices in the main fixture",
     VAT_PARAM_ROWS},
    {"rows_max", VAT_PARAM_INT, 90, NULL, 12, 5000, "most invoices in the main fixture",
     VAT_PARAM_ROWS},
    {"variants", VAT_PARAM_INT, 3, NULL, 2, 6, "held-out variant fixtures per task",
     VAT_PARAM_PLAIN},
    {"hardness", VAT_PARAM_REAL, 0.5, NULL, 0, 1,
     "chance of each harder feature: quarter/year periods, unit conversion, two paid values, "
     "look-alike statuses", VAT_PARAM_PLAIN},
    {0},
};

enum period { PERIOD_MONTH, PERIOD_QUARTER, PERIOD_YEAR };

static const char *const period_word[] = {"month", "quarter", "year"};
static const char *const period_format[] = {"YYYY-MM", "YYYY-Qn", "YYYY"};

struct table_choice {
    const char *table, *id_col, *id_prefix;
};

static const struct table_choice tables[] = {
    {"invoices", "invoice_id", "INV-"},      {"bills", "bill_id", "BILL-"},
    {"billing_documents", "document_id", "BD-"}, {"sales_invoices", "invoice_no", "SI-"},
    {"customer_invoices", "invoice_id", "CI-"}, {"ar_invoices", "ar_invoice_id", "AR-"},
    {"invoice_headers", "header_id", "IH-"}, {"receivables", "receivable_id", "RCV-"},
};

static const char *const customer_cols[] = {"customer_id", "client_id", "account_id",
                                            "customer_ref"};
static const char *const customer_prefixes[] = {"C-", "CL-", "ACC-", "CUST-"};
static const char *const status_cols[] = {"status", "state", "payment_status", "invoice_status"};
static const char *const amount_cols_dollars[] = {"amount", "total", "amount_usd", "gross_amount",
                                                  "total_due"};
static const char *const amount_cols_cents[] = {"amount_cents", "total_cents", "amount_minor",
                                                "gross_cents", "total_minor"};
static const char *const date_cols[] = {"issued_on", "issue_date", "invoice_date", "billed_on"};
static const char *const stamp_cols[] = {"invoiced_at", "issued_at", "created_at", "billed_at"};
static const char *const due_cols_date[] = {"due_on", "due_date"};
static const char *const paid_words[] = {"paid", "settled", "collected", "cleared"};
static const char *const unpaid_words[] = {"open",      "void",     "overdue",  "draft",
                                           "refunded",  "pending",  "cancelled", "disputed",
                                           "sent",      "written_off"};
/* Statuses that contain a paid word: they punish LIKE '%paid%'. */
static const char *const decoy_words[] = {"partially_paid", "unpaid"};
static const char *const out_period_names[][4] = {
    {"month", "period", "invoice_month", "billing_month"},
    {"quarter", "period", "invoice_quarter", "billing_quarter"},
    {"year", "period", "invoice_year", "billing_year"},
};
static const char *const out_revenue_dollars[] = {"revenue", "paid_revenue", "paid_total",
                                                  "revenue_usd"};
static const char *const out_revenue_cents[] = {"revenue_cents", "paid_cents",
                                                "paid_total_cents", "revenue_minor"};

/* The drawn question: everything the prompt, the gold query, the fill
 * function and the second derivation need. */
struct question {
    int side; /* the task's (invoice ids are drawn on it: vat_side_owns) */
    const char *table, *id_col, *id_prefix;
    const char *cust_col, *cust_prefix;
    const char *status_col, *amount_col, *date_col, *due_col; /* due_col may be NULL */
    bool amount_cents;  /* stored as integer cents, else decimal dollars */
    bool want_cents;    /* revenue asked for in cents                    */
    bool timestamps;    /* 'YYYY-MM-DD HH:MM:SS', else 'YYYY-MM-DD'      */
    bool descending;
    bool decoy;         /* a look-alike status is among the unpaid ones  */
    enum period period;
    char paid[2][24];
    int npaid;
    char unpaid[MAX_STATUS][24];
    int nunpaid;
    const char *out_period, *out_revenue;
    long rows_min, rows_max;
    char *schema;
    char *insert_sql;
};

static void question_free(void *p)
{
    struct question *q = p;
    if (!q)
        return;
    free(q->schema);
    free(q->insert_sql);
    free(q);
}

/* Writes word into out in the task's case style: 0 lower, 1 UPPER,
 * 2 Capitalised words ("Written off"). */
static void styled(const char *word, int style, char out[24])
{
    size_t i = 0;
    for (; word[i] && i < 23; i++) {
        char c = word[i];
        if (style == 1 && c >= 'a' && c <= 'z')
            c = (char)(c - 'a' + 'A');
        if (style == 2) {
            if (c == '_')
                c = ' ';
            else if (i == 0 && c >= 'a' && c <= 'z')
                c = (char)(c - 'a' + 'A');
        }
        out[i] = c;
    }
    out[i] = 0;
}

static void draw_question(struct question *q, struct vat_rng *rng, double hardness)
{
    const struct table_choice *tc = &tables[vat_rng_below(rng, sizeof tables / sizeof *tables)];
    q->table = tc->table;
    q->id_col = tc->id_col;
    q->id_prefix = tc->id_prefix;
    uint32_t ci = vat_rng_below(rng, sizeof customer_cols / sizeof *customer_cols);
    q->cust_col = customer_cols[ci];
    q->cust_prefix = customer_prefixes[ci];
    q->status_col = VAT_PICK(rng, status_cols);

    q->amount_cents = vat_rng_chance(rng, 0.4);
    q->amount_col = q->amount_cents ? VAT_PICK(rng, amount_cols_cents)
                                    : VAT_PICK(rng, amount_cols_dollars);
    /* Unit conversion is one of the harder features. */
    bool convert = vat_rng_chance(rng, hardness * 0.6);
    q->want_cents = convert ? !q->amount_cents : q->amount_cents;

    q->timestamps = vat_rng_chance(rng, 0.4);
    q->date_col = q->timestamps ? VAT_PICK(rng, stamp_cols) : VAT_PICK(rng, date_cols);
    q->due_col = NULL;
    if (vat_rng_chance(rng, 0.5))
        q->due_col = q->timestamps ? "due_at" : VAT_PICK(rng, due_cols_date);

    q->period = PERIOD_MONTH;
    if (vat_rng_chance(rng, hardness * 0.9))
        q->period = vat_rng_chance(rng, 0.5) ? PERIOD_QUARTER : PERIOD_YEAR;
    q->descending = vat_rng_chance(rng, 0.5);

    int style = (int)vat_rng_below(rng, 3);
    const char *pw[4];
    memcpy(pw, paid_words, sizeof pw);
    vat_rng_shuffle(rng, pw, 4, sizeof *pw);
    q->npaid = vat_rng_chance(rng, hardness * 0.5) ? 2 : 1;
    for (int i = 0; i < q->npaid; i++)
        styled(pw[i], style, q->paid[i]);

    /* The non-paid statuses: the first one found sorting before every
     * paid value and the first sorting after every paid value (each paid
     * word has both among unpaid_words, in every case style), then any.
     * With both present a paid filter written as <= or >= instead of =
     * takes a non-paid status and gets caught. */
    enum { N_UNPAID = sizeof unpaid_words / sizeof *unpaid_words };
    char uw[N_UNPAID][24];
    const char *order[N_UNPAID];
    memcpy(order, unpaid_words, sizeof order);
    vat_rng_shuffle(rng, order, N_UNPAID, sizeof *order);
    for (int i = 0; i < N_UNPAID; i++)
        styled(order[i], style, uw[i]);
    int below = -1, above = -1;
    for (int i = 0; i < N_UNPAID; i++) {
        bool lo = true, hi = true;
        for (int k = 0; k < q->npaid; k++) {
            lo &= strcmp(uw[i], q->paid[k]) < 0;
            hi &= strcmp(uw[i], q->paid[k]) > 0;
        }
        if (lo && below < 0)
            below = i;
        if (hi && above < 0)
            above = i;
    }
    q->nunpaid = (int)vat_rng_range(rng, 3, 5);
    int n = 0;
    if (below >= 0)
        memcpy(q->unpaid[n++], uw[below], 24);
    if (above >= 0)
        memcpy(q->unpaid[n++], uw[above], 24);
    for (int i = 0; i < N_UNPAID && n < q->nunpaid; i++)
        if (i != below && i != above)
            memcpy(q->unpaid[n++], uw[i], 24);
    vat_rng_shuffle(rng, q->unpaid, (size_t)n, sizeof q->unpaid[0]);
    q->decoy = vat_rng_chance(rng, hardness * 0.6);
    if (q->decoy)
        styled(VAT_PICK(rng, decoy_words), style, q->unpaid[q->nunpaid++]);

    q->out_period = out_period_names[q->period][vat_rng_below(rng, 4)];
    q->out_revenue = q->want_cents ? VAT_PICK(rng, out_revenue_cents)
                                   : VAT_PICK(rng, out_revenue_dollars);
}

/* The question space: the names the gold query spells (table, status,
 * amount and date columns, the two output aliases) and the direction, as
 * the digits of one mixed-radix number.  Each digit picks from a list of
 * the same length whichever list the drawn features (units, timestamps,
 * period) select, and the lists are disjoint, so two numbers name two
 * different gold queries.  20,480 questions. */
#define N_TABLES (sizeof tables / sizeof *tables)
#define N_QUESTIONS (N_TABLES * 4 * 5 * 4 * 4 * 4 * 2)
_Static_assert(VAT_N_OF(status_cols) == 4 && VAT_N_OF(amount_cols_cents) == 5 &&
                   VAT_N_OF(amount_cols_dollars) == 5 && VAT_N_OF(stamp_cols) == 4 &&
                   VAT_N_OF(date_cols) == 4 && VAT_N_OF(out_revenue_cents) == 4 &&
                   VAT_N_OF(out_revenue_dollars) == 4,
               "apply_question's radices are the lists' lengths");

/* Replaces the drawn names with the ones question number k decodes to.
 * The draws they replace stay in the stream, so every later draw of the
 * task (fixture rows, statuses) is what it was. */
static void apply_question(struct question *q, uint64_t k)
{
    const struct table_choice *tc = &tables[vat_question_digit(&k, N_TABLES)];
    q->table = tc->table;
    q->id_col = tc->id_col;
    q->id_prefix = tc->id_prefix;
    q->status_col = status_cols[vat_question_digit(&k, 4)];
    size_t a = vat_question_digit(&k, 5);
    q->amount_col = q->amount_cents ? amount_cols_cents[a] : amount_cols_dollars[a];
    size_t d = vat_question_digit(&k, 4);
    q->date_col = q->timestamps ? stamp_cols[d] : date_cols[d];
    q->out_period = out_period_names[q->period][vat_question_digit(&k, 4)];
    size_t r = vat_question_digit(&k, 4);
    q->out_revenue = q->want_cents ? out_revenue_cents[r] : out_revenue_dollars[r];
    q->descending = vat_question_digit(&k, 2) != 0;
}

static void build_schema(struct question *q)
{
    struct vat_buf b = VAT_BUF_INIT, ins = VAT_BUF_INIT;
    vat_buf_printf(&b, "CREATE TABLE %s (\n", q->table);
    vat_buf_printf(&b, "    %s TEXT PRIMARY KEY,\n", q->id_col);
    vat_buf_printf(&b, "    %s TEXT NOT NULL,\n", q->cust_col);
    vat_buf_printf(&b, "    %s TEXT NOT NULL,\n", q->status_col);
    if (q->amount_cents)
        vat_buf_printf(&b, "    %s INTEGER,  -- US cents; NULL until priced\n", q->amount_col);
    else
        vat_buf_printf(&b, "    %s REAL,  -- US dollars; NULL until priced\n", q->amount_col);
    const char *fmt = q->timestamps ? "YYYY-MM-DD HH:MM:SS" : "YYYY-MM-DD";
    vat_buf_printf(&b, "    %s TEXT NOT NULL%s  -- %s\n", q->date_col, q->due_col ? "," : "",
                   fmt);
    if (q->due_col)
        vat_buf_printf(&b, "    %s TEXT  -- %s\n", q->due_col, fmt);
    vat_buf_puts(&b, ")");
    q->schema = vat_buf_detach(&b);

    vat_buf_printf(&ins, "INSERT INTO %s (%s, %s, %s, %s, %s%s%s) VALUES (?1, ?2, ?3, ?4, ?5%s)",
                   q->table, q->id_col, q->cust_col, q->status_col, q->amount_col, q->date_col,
                   q->due_col ? ", " : "", q->due_col ? q->due_col : "", q->due_col ? ", ?6" : "");
    q->insert_sql = vat_buf_detach(&ins);
}

/* ---- the fixture rows ----------------------------------------------------- */

struct invoice {
    int64_t secs;   /* issue time, seconds since the epoch */
    int status;     /* < npaid: paid value; else npaid + unpaid index */
    int64_t cents;  /* amount; -1 for NULL */
    int terms;      /* days until due */
    int seq;        /* creation order, to keep the sort stable */
};

struct invoice_list {
    struct invoice *v;
    size_t n, cap;
};

/* Days since the epoch of the first day of period k of kind p (k counts
 * months, quarters or years from year 0). */
static int32_t period_first_day(enum period p, int64_t k)
{
    switch (p) {
    case PERIOD_MONTH: return vat_date_from_civil((int)(k / 12), (int)(k % 12) + 1, 1);
    case PERIOD_QUARTER: return vat_date_from_civil((int)(k / 4), (int)(k % 4) * 3 + 1, 1);
    default: return vat_date_from_civil((int)k, 1, 1);
    }
}

static int32_t period_last_day(enum period p, int64_t k)
{
    return period_first_day(p, k + 1) - 1;
}

enum when { WHEN_ANY, WHEN_FIRST, WHEN_LAST };

static int64_t draw_instant(const struct question *q, struct vat_rng *rng, int64_t k,
                            enum when w)
{
    int32_t first = period_first_day(q->period, k), last = period_last_day(q->period, k);
    if (w == WHEN_FIRST)
        return (int64_t)first * 86400;
    if (w == WHEN_LAST)
        return (int64_t)last * 86400 + (q->timestamps ? 86399 : 0);
    int64_t day = vat_rng_range(rng, first, last);
    /* Office hours make the timestamps look like real issue times. */
    return day * 86400 + (q->timestamps ? vat_rng_range(rng, 7 * 3600, 19 * 3600 - 1) : 0);
}

static int64_t draw_cents(struct vat_rng *rng)
{
    uint32_t kind = vat_rng_below(rng, 10);
    if (kind == 0)
        return vat_rng_range(rng, 50, 1000) * 100; /* a round-dollar retainer */
    if (kind <= 2)
        return vat_gen_cents(rng, 250000, 1500000);
    return vat_gen_cents(rng, 2500, 250000);
}

static void add_invoice(struct invoice_list *l, const struct question *q, struct vat_rng *rng,
                        int64_t k, enum when w, int status, bool null_amount)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->v = vat_xrealloc(l->v, l->cap * sizeof *l->v);
    }
    static const int terms[] = {14, 30, 30, 45, 60};
    struct invoice *iv = &l->v[l->n];
    iv->secs = draw_instant(q, rng, k, w);
    iv->status = status;
    iv->cents = null_amount ? -1 : draw_cents(rng);
    iv->terms = terms[vat_rng_below(rng, 5)];
    iv->seq = (int)l->n;
    l->n++;
}

static int paid_status(const struct question *q, struct vat_rng *rng)
{
    return (int)vat_rng_below(rng, (uint32_t)q->npaid);
}

static int unpaid_status(const struct question *q, struct vat_rng *rng)
{
    return q->npaid + (int)vat_rng_below(rng, (uint32_t)q->nunpaid);
}

/* The first period of a fixture: recent years, any month or quarter. */
static int64_t draw_start(const struct question *q, struct vat_rng *rng, bool wrap)
{
    int64_t y = vat_rng_range(rng, 2019, 2024);
    switch (q->period) {
    case PERIOD_MONTH: return y * 12 + (wrap ? vat_rng_range(rng, 8, 11) : vat_rng_below(rng, 12));
    case PERIOD_QUARTER: return y * 4 + (wrap ? vat_rng_range(rng, 2, 3) : vat_rng_below(rng, 4));
    default: return y - 4;
    }
}

/* Main fixture: every period has a paid invoice with an amount; most
 * periods also have a non-paid invoice with an amount, which arms the
 * trap (dropping the paid filter changes those periods' sums). */
static void plan_main(const struct question *q, struct vat_rng *rng, struct invoice_list *l)
{
    long n = (long)vat_rng_range(rng, q->rows_min, q->rows_max);
    static const int lo[] = {4, 4, 3}, hi[] = {12, 8, 5};
    long cap = n / 3 < hi[q->period] ? n / 3 : hi[q->period];
    int np = (int)vat_rng_range(rng, lo[q->period], cap);
    int64_t start = draw_start(q, rng, false);
    for (int k = 0; k < np; k++)
        add_invoice(l, q, rng, start + k, WHEN_ANY, k % q->npaid, false);
    int skip = np >= 4 && vat_rng_chance(rng, 0.5) ? (int)vat_rng_below(rng, (uint32_t)np) : -1;
    for (int k = 0; k < np; k++)
        if (k != skip)
            add_invoice(l, q, rng, start + k, WHEN_ANY, unpaid_status(q, rng), false);
    /* Every non-paid status has an invoice with an amount, so a filter
     * that lets any one of them in (<= or >= for =, a LIKE) changes a sum. */
    for (int u = 0; u < q->nunpaid; u++) {
        bool seen = false;
        for (size_t i = 0; i < l->n; i++)
            seen |= l->v[i].status == q->npaid + u;
        if (!seen)
            add_invoice(l, q, rng, start + vat_rng_below(rng, (uint32_t)np), WHEN_ANY,
                        q->npaid + u, false);
    }
    while ((long)l->n < n) {
        int64_t k = start + vat_rng_below(rng, (uint32_t)np);
        int st = vat_rng_chance(rng, 0.55) ? paid_status(q, rng) : unpaid_status(q, rng);
        add_invoice(l, q, rng, k, WHEN_ANY, st, vat_rng_chance(rng, 0.04));
    }
}

/* Variant "gaps": an empty period, a period with only non-paid invoices
 * and a period whose paid invoices all lack an amount, all inside the
 * range; every other period has invoices on its first and last instant. */
static void plan_gaps(const struct question *q, struct vat_rng *rng, struct invoice_list *l)
{
    int np = (int)vat_rng_range(rng, 5, 7);
    int64_t start = draw_start(q, rng, false);
    int inner[5];
    for (int i = 0; i < np - 2; i++)
        inner[i] = i + 1;
    vat_rng_shuffle(rng, inner, (size_t)(np - 2), sizeof *inner);
    int empty = inner[0], unpaid_only = inner[1], null_only = inner[2];
    for (int k = 0; k < np; k++) {
        int64_t pk = start + k;
        if (k == empty)
            continue;
        if (k == unpaid_only) {
            add_invoice(l, q, rng, pk, WHEN_FIRST, unpaid_status(q, rng), false);
            add_invoice(l, q, rng, pk, WHEN_LAST, unpaid_status(q, rng), false);
            continue;
        }
        if (k == null_only) {
            int extra = (int)vat_rng_range(rng, 1, 2);
            for (int i = 0; i < extra; i++)
                add_invoice(l, q, rng, pk, WHEN_ANY, paid_status(q, rng), true);
            add_invoice(l, q, rng, pk, WHEN_ANY, unpaid_status(q, rng), false);
            continue;
        }
        add_invoice(l, q, rng, pk, WHEN_FIRST, k % q->npaid, false);
        add_invoice(l, q, rng, pk, WHEN_LAST,
                    vat_rng_chance(rng, 0.5) ? paid_status(q, rng) : unpaid_status(q, rng),
                    false);
        int extra = (int)vat_rng_below(rng, 3);
        for (int i = 0; i < extra; i++) {
            int st = vat_rng_chance(rng, 0.5) ? paid_status(q, rng) : unpaid_status(q, rng);
            add_invoice(l, q, rng, pk, WHEN_ANY, st, vat_rng_chance(rng, 0.15));
        }
    }
}

/* Variant "wrap": the periods cross a year boundary, invoices sit on the
 * last second of one year and the first of the next, and some periods
 * hold a single paid invoice. */
static void plan_wrap(const struct question *q, struct vat_rng *rng, struct invoice_list *l)
{
    int np = q->period == PERIOD_YEAR ? (int)vat_rng_range(rng, 3, 4)
                                      : (int)vat_rng_range(rng, 4, 6);
    int64_t start = draw_start(q, rng, true);
    for (int k = 0; k < np; k++) {
        int64_t pk = start + k;
        if (k > 0 && vat_rng_chance(rng, 0.4)) {
            add_invoice(l, q, rng, pk, WHEN_ANY, k % q->npaid, false);
            continue;
        }
        add_invoice(l, q, rng, pk, WHEN_LAST, k % q->npaid, false);
        add_invoice(l, q, rng, pk, WHEN_FIRST, unpaid_status(q, rng), false);
        int extra = (int)vat_rng_range(rng, 1, 3);
        for (int i = 0; i < extra; i++) {
            int st = vat_rng_chance(rng, 0.5) ? paid_status(q, rng) : unpaid_status(q, rng);
            add_invoice(l, q, rng, pk, WHEN_ANY, st, false);
        }
    }
}

/* Variant "single": one paid invoice. */
static void plan_single(const struct question *q, struct vat_rng *rng, struct invoice_list *l)
{
    /* one draw per statement (docs/determinism.md): the status, the
     * start, then the offset, the order the corpus was drawn in before
     * so its bytes stay */
    int status = paid_status(q, rng);
    int64_t start = draw_start(q, rng, false);
    int64_t k = start + vat_rng_below(rng, 4);
    add_invoice(l, q, rng, k, WHEN_ANY, status, false);
}

static int cmp_invoice(const void *a, const void *b)
{
    const struct invoice *x = a, *y = b;
    if (x->secs != y->secs)
        return x->secs < y->secs ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

static void fmt_instant(const struct question *q, int64_t secs, char out[20])
{
    if (q->timestamps)
        vat_fmt_timestamp(secs, out);
    else
        vat_fmt_date((int32_t)(secs / 86400), out);
}

static int fill(void *ctx, struct vat_rng *rng, int corner, struct vat_sqlw *w, struct vat_err *e)
{
    const struct question *q = ctx;
    struct invoice_list l = {NULL, 0, 0};
    switch (corner == 0 ? 0 : (corner - 1) % 3 + 1) {
    case 0: plan_main(q, rng, &l); break;
    case 1: plan_gaps(q, rng, &l); break;
    case 2: plan_wrap(q, rng, &l); break;
    default: plan_single(q, rng, &l); break;
    }
    /* Invoice numbers follow issue order, as a billing system's would. */
    qsort(l.v, l.n, sizeof *l.v, cmp_invoice);
    size_t npool = l.n / 4 > 2 ? l.n / 4 : 2;
    char(*pool)[16] = vat_xcalloc(npool, sizeof *pool);
    for (size_t i = 0; i < npool; i++)
        vat_gen_id(rng, q->cust_prefix, 4, pool[i], sizeof pool[i]);
    int64_t next_id = vat_rng_range(rng, 1000, 80000);

    int rc = 0;
    for (size_t i = 0; i < l.n && rc == 0; i++) {
        const struct invoice *iv = &l.v[i];
        char id[32], when[20], due[20];
        size_t pl = strlen(q->id_prefix); /* at most 5: the table above */
        memcpy(id, q->id_prefix, pl);
        next_id = vat_side_next_id(q->side, q->id_prefix, 6, (long)next_id);
        vat_fmt_int((long long)next_id++, 6, id + pl);
        const char *cust = pool[vat_rng_below(rng, (uint32_t)npool)];
        const char *status = iv->status < q->npaid ? q->paid[iv->status]
                                                   : q->unpaid[iv->status - q->npaid];
        fmt_instant(q, iv->secs, when);
        fmt_instant(q, iv->secs + (int64_t)iv->terms * 86400, due);
        const char *due_arg = q->due_col ? due : NULL;
        /* The amount's storage type decides its bind letter. */
        if (iv->cents < 0)
            rc = q->due_col ? vat_sqlw_insert(w, q->insert_sql, "tttntt", id, cust, status, when,
                                              due_arg)
                            : vat_sqlw_insert(w, q->insert_sql, "tttnt", id, cust, status, when);
        else if (q->amount_cents)
            rc = q->due_col ? vat_sqlw_insert(w, q->insert_sql, "tttitt", id, cust, status,
                                              (int64_t)iv->cents, when, due_arg)
                            : vat_sqlw_insert(w, q->insert_sql, "tttit", id, cust, status,
                                              (int64_t)iv->cents, when);
        else
            rc = q->due_col ? vat_sqlw_insert(w, q->insert_sql, "tttdtt", id, cust, status,
                                              (double)iv->cents / 100.0, when, due_arg)
                            : vat_sqlw_insert(w, q->insert_sql, "tttdt", id, cust, status,
                                              (double)iv->cents / 100.0, when);
    }
    if (rc != 0)
        vat_err_set(e, "vat: cannot insert into '%s'", q->table);
    free(pool);
    free(l.v);
    return rc;
}

/* ---- the question as text ------------------------------------------------- */

static void put_period_expr(struct vat_buf *b, const struct question *q)
{
    const char *d = q->date_col;
    switch (q->period) {
    case PERIOD_MONTH: vat_buf_printf(b, "strftime('%%Y-%%m', %s)", d); break;
    case PERIOD_QUARTER:
        vat_buf_printf(b,
                       "strftime('%%Y', %s) || '-Q' || "
                       "((CAST(strftime('%%m', %s) AS INTEGER) + 2) / 3)",
                       d, d);
        break;
    default: vat_buf_printf(b, "strftime('%%Y', %s)", d); break;
    }
}

static void put_revenue_expr(struct vat_buf *b, const struct question *q)
{
    const char *a = q->amount_col;
    /* TOTAL() is 0.0 over only NULLs, which is what "a NULL amount counts
     * as 0" means for a period whose paid invoices all lack an amount.
     * Amounts are whole cents, so a dollar total needs no rounding (the
     * checker's tolerance absorbs float noise; round(x, 2) would be a
     * no-op no fixture can tell from round(x, 3)); a cent total from
     * dollars does, before the cast truncates 12345.9999.. to 12345. */
    if (!q->amount_cents && !q->want_cents)
        vat_buf_printf(b, "TOTAL(%s)", a);
    else if (!q->amount_cents)
        vat_buf_printf(b, "CAST(round(TOTAL(%s) * 100) AS INTEGER)", a);
    else if (!q->want_cents)
        vat_buf_printf(b, "TOTAL(%s) / 100.0", a);
    else
        vat_buf_printf(b, "COALESCE(SUM(%s), 0)", a);
}

static void put_paid_filter(struct vat_buf *b, const struct question *q)
{
    if (q->npaid == 1) {
        vat_buf_printf(b, "%s = ", q->status_col);
        vat_sqlgen_put_literal(b, q->paid[0]);
        return;
    }
    vat_buf_printf(b, "%s IN (", q->status_col);
    for (int i = 0; i < q->npaid; i++) {
        if (i)
            vat_buf_puts(b, ", ");
        vat_sqlgen_put_literal(b, q->paid[i]);
    }
    vat_buf_putc(b, ')');
}

/* The reference query; without the filter it is the trap. */
static char *build_query(const struct question *q, bool paid_only)
{
    struct vat_buf b = VAT_BUF_INIT;
    vat_buf_puts(&b, "SELECT ");
    put_period_expr(&b, q);
    vat_buf_printf(&b, " AS %s,\n       ", q->out_period);
    put_revenue_expr(&b, q);
    vat_buf_printf(&b, " AS %s\nFROM %s\n", q->out_revenue, q->table);
    if (paid_only) {
        vat_buf_puts(&b, "WHERE ");
        put_paid_filter(&b, q);
        vat_buf_putc(&b, '\n');
    }
    vat_buf_printf(&b, "GROUP BY %s\nORDER BY %s %s", q->out_period, q->out_period,
                   q->descending ? "DESC" : "ASC");
    return vat_buf_detach(&b);
}

static void put_paid_list(struct vat_buf *b, const struct question *q)
{
    for (int i = 0; i < q->npaid; i++) {
        if (i)
            vat_buf_puts(b, " or exactly ");
        vat_sqlgen_put_literal(b, q->paid[i]);
    }
}

static const char *date_format(const struct question *q)
{
    return q->timestamps ? "YYYY-MM-DD HH:MM:SS" : "YYYY-MM-DD";
}

static const char *const period_text[] = {
    "the calendar month, as text 'YYYY-MM'",
    "the calendar quarter, as text 'YYYY-Qn' with n from 1 to 4 (Q1 is January to March)",
    "the calendar year, as text 'YYYY'",
};

/* Phrasings of both styles. */
static const char *const d_explicit[] = {"Columns:", "The columns:", "About the columns:",
                                         "What the columns hold:", "[[Column|Schema]] notes:"};
/* The explicit question, ways of asking it: {pw} the period word
 * ("month"), {col} the issue date's column. */
static const char *const q_explicit[] = {
    "Task: write one SQLite SELECT statement that reports the paid revenue per calendar {pw} "
    "of issue (the {pw} is taken from `{col}`).",
    "Which SQLite SELECT statement reports, for each calendar {pw} of issue (taken from "
    "`{col}`), the paid revenue?",
    "Give a SQLite query returning the paid revenue of every calendar {pw} of issue, the {pw} "
    "being taken from `{col}`.",
    "One SQLite SELECT statement should report how much paid revenue each calendar {pw} of "
    "issue brought in (the {pw} comes from `{col}`).",
    "[[Write|Give]] a single SELECT (SQLite) for the paid revenue by calendar {pw} of issue, "
    "the {pw} read from `{col}`.",
};
static const char *const d_natural[] = {
    "In `{table}`, `{status}` says whether the invoice was paid: {paid} {paid?means|mean} "
    "paid. `{amount}` is {unit}, NULL until the invoice is priced; `{date}` is when it was "
    "issued ({fmt}).",
    "`{table}.{status}` holds the payment state ({paid} for a paid invoice); `{amount}` is "
    "{unit}, NULL before pricing, and `{date}` the issue date ({fmt}).",
    "Each `{table}` row is an invoice: `{status}` is its payment state, paid being {paid}; "
    "`{amount}` is {unit}, or NULL while unpriced; `{date}` is its issue time, {fmt}.",
    "Invoices are in `{table}`. A paid invoice has `{status}` {paid}; `{amount}` is {unit} "
    "and stays NULL until priced; `{date}` ({fmt}) is when it was issued.",
    "[[The invoices sit in|Our invoices are in]] `{table}`: `{status}` {paid?is|is one of} "
    "{paid} for a paid invoice, `{amount}` is {unit}, NULL until priced, and `{date}` "
    "records when it was issued ({fmt}).",
};
static const char *const q_natural[] = {
    "Finance would like our paid revenue per {period} of issue. Could you write the query?",
    "I need a query for the revenue we were actually paid, by {period} the invoice was issued.",
    "Can you give me an SQLite query for paid invoice revenue per {period} of issue?",
    "Please write the query that totals paid invoices by {period} of issue.",
    "[[For the board pack|For the revenue dashboard|For our cash report]], could you write a "
    "query for paid revenue by {period} of issue?",
};
static const char *const c_natural[] = {
    "A {period} whose paid invoices are all unpriced {zero}.",
    "[[If|When]] every paid invoice of a {period} is still unpriced, that {period} {zero}.",
    "A {period} with paid invoices that are all unpriced {zero}.",
};
static const char *const giveaways[] = {
    "any other value means not paid", "case-sensitive", "A NULL amount counts as 0",
    "compared to within", "0.000001", "no other rows", NULL,
};
/* The trap's corner, which a natural prompt never describes. */
static const char *const defects[] = {
    "other statuses", "not yet paid", "unpaid invoices count", "look-alike", NULL,
};
static const char *const answer_columns[] = {NULL};
static const char *const states_zero[] = {"shows 0", "still shows 0", NULL};
static const char *const states_issue[] = {"of issue", "was issued", NULL};
static const char *const states_paid[] = {"paid", NULL};
static const struct vat_convention conventions[] = {
    {"null_amount", states_zero},
    {"date_column", states_issue},
    {"paid_statuses", states_paid},
    {NULL, NULL},
};

static void natural_text(struct vat_buf *b, struct vat_task *t, const struct question *q)
{
    struct vat_buf paid = VAT_BUF_INIT;
    for (int i = 0; i < q->npaid; i++) {
        if (i)
            vat_buf_puts(&paid, i + 1 == q->npaid ? " or " : ", ");
        vat_sqlgen_put_literal(&paid, q->paid[i]);
    }
    const char *kv[] = {
        "table", q->table, "status", q->status_col, "paid", paid.data,
        "paid#", q->npaid > 1 ? "pl" : "sg", "amount", q->amount_col,
        "unit", q->amount_cents ? "in US cents (an integer)" : "in US dollars (whole cents)",
        "date", q->date_col, "fmt", date_format(q), "period", period_word[q->period],
        "zero", vat_prompt_state(t, "null_amount"),
        NULL,
    };
    vat_buf_puts(b, "\n");
    VAT_PROMPT_PUT(b, t, 'd', d_natural, kv);
    vat_buf_puts(b, "\n\n");
    VAT_PROMPT_PUT(b, t, 'q', q_natural, kv);
    vat_buf_puts(b, " ");
    VAT_PROMPT_PUT(b, t, 'c', c_natural, kv);
    vat_buf_puts(b, " ");
    vat_buf_release(&paid);
}

static int build_prompt(struct vat_task *t, const struct question *q, struct vat_err *e)
{
    struct vat_buf b = VAT_BUF_INIT, data = VAT_BUF_INIT;
    const char *tabs[1] = {q->table};
    bool cut = false;
    if (vat_sqlgen_render(t->root, t->fixture[0].path, tabs, 1, vat_task_inline_cap(t), &data, &cut,
                          e) != 0) {
        vat_buf_release(&data);
        return -1;
    }
    /* The schema is always shown: it is all a query needs. */
    t->self_contained = true;
    const char *pw = period_word[q->period];

    const char *okv[] = {"topic", "[[our invoices|paid revenue|the receivables]]", NULL};
    vat_prompt_open(&b, t, okv);
    char *what = vat_xasprintf("[[one table of customer invoices, `%s`|a single table, `%s`, of "
                               "customer invoices|the customer invoices in one table, `%s`]]",
                               q->table, q->table, q->table);
    vat_sqlgen_prompt_intro(&b, t, what, cut ? "its leading rows" : "all its rows");
    free(what);
    vat_buf_putn(&b, data.data, data.len);
    if (cut)
        vat_buf_puts(&b, "\nOnly the leading rows fit here; the full table is in the file.\n");
    vat_buf_release(&data);

    bool nat = vat_prompt_natural(t);
    struct vat_buf plist = VAT_BUF_INIT;
    put_paid_list(&plist, q);
    const char *kv[] = {
        "id", q->id_col, "cust", q->cust_col, "status", q->status_col, "plist", plist.data,
        "amount", q->amount_col, "date", q->date_col, "fmt", date_format(q), "pw", pw,
        "col", q->date_col, "due", q->due_col ? q->due_col : "",
        "out_period", q->out_period, "period_text", period_text[q->period],
        "out_revenue", q->out_revenue,
        "dir", q->descending ? "descending (latest first)" : "ascending (earliest first)",
        "ndir", q->descending ? "latest first" : "earliest first",
        NULL,
    };
    if (nat) {
        natural_text(&b, t, q);
        goto output_columns;
    }
    vat_buf_puts(&b, "\n");
    VAT_PROMPT_PUT(&b, t, 'd', d_explicit, NULL);
    vat_buf_puts(&b, "\n");
    vat_prompt_say(&b, t, 'x',
                   "- `{id}` [[identifies the invoice|is the invoice's id]]; `{cust}` is "
                   "[[the customer it was issued to|the customer billed|who was billed]].\n"
                   "- `{status}` is [[the payment status|the invoice's payment state]]. An "
                   "invoice is paid when `{status}` is exactly {plist} (case-sensitive, as "
                   "stored); any other value means not paid.\n",
                   kv);
    if (q->amount_cents)
        vat_prompt_say(&b, t, 'x',
                       "- `{amount}` is [[the invoice amount|the amount billed]] in US cents, "
                       "an integer; ",
                       kv);
    else
        vat_prompt_say(&b, t, 'x',
                       "- `{amount}` is [[the invoice amount|the amount billed]] in US "
                       "dollars, a decimal number of whole cents (at most 2 decimal places); ",
                       kv);
    vat_prompt_say(&b, t, 'x',
                   "it is NULL [[while the invoice has not been priced|until the invoice is "
                   "priced]].\n"
                   "- `{date}` is [[when the invoice was issued|the time the invoice was "
                   "issued]], ISO text '{fmt}'.\n",
                   kv);
    if (q->due_col)
        vat_prompt_say(&b, t, 'x',
                       "- `{due}` is the payment due date; it [[plays no part in the "
                       "question|does not matter here|is not needed]].\n",
                       kv);
    vat_buf_puts(&b, "\n");
    VAT_PROMPT_PUT(&b, t, 'q', q_explicit, kv);
    vat_buf_putc(&b, ' ');
output_columns:
    vat_prompt_say(&b, t, 'o',
                   nat ? "[[It must return|Return|I'd like]] exactly two columns, [[in this "
                         "order|in order|as follows]]:\n1. `{out_period}`: {period_text};\n"
                       : "[[It must return|Return|The result has]] exactly two columns, [[in "
                         "this order|in order|as follows]]:\n1. `{out_period}`: "
                         "{period_text};\n",
                   kv);
    vat_prompt_say(&b, t, 'o',
                   "2. `{out_revenue}`: [[the total amount of the {pw}'s paid invoices|the sum "
                   "of the {pw}'s paid invoices|the {pw}'s paid invoice total]] ",
                   kv);
    if (!q->want_cents && nat)
        vat_buf_puts(&b, "in US dollars (rounding to cents is fine).\n");
    else if (!q->want_cents)
        vat_buf_puts(&b, "in US dollars. Every amount is a whole number of cents, so the total "
                         "is too; results are compared to within 0.000001, so rounding to 2 "
                         "decimal places is allowed but not needed.\n");
    else if (q->amount_cents)
        vat_buf_puts(&b, "in US cents, as an integer.\n");
    else
        vat_buf_puts(&b, "in US cents, as an integer (the dollar total times 100, rounded to "
                         "the nearest cent).\n");
    if (nat)
        vat_prompt_say(&b, t, 'o',
                       "[[One row per {pw} with a paid invoice|A row for each {pw} that has a "
                       "paid invoice]], {ndir}.\n",
                       kv);
    else
        vat_prompt_say(&b, t, 'o',
                       "A NULL amount counts as 0, so a {pw} whose paid invoices all have a "
                       "NULL amount shows 0. Return one row per {pw} that has at least one paid "
                       "invoice and no other rows, [[ordered|sorted]] by {pw} {dir}.\n",
                       kv);
    vat_buf_release(&plist);
    vat_buf_puts(&b, "\n");
    vat_sqlgen_prompt_close(&b, t);
    t->prompt = vat_buf_detach(&b);
    return 0;
}

static json_t *build_params(const struct question *q)
{
    json_t *p = json_object();
    json_t *paid = json_array();
    for (int i = 0; i < q->npaid; i++)
        json_array_append_new(paid, json_string(q->paid[i]));
    json_object_set_new(p, "table", json_string(q->table));
    json_object_set_new(p, "status_column", json_string(q->status_col));
    json_object_set_new(p, "paid_statuses", paid);
    json_object_set_new(p, "amount_column", json_string(q->amount_col));
    json_object_set_new(p, "amount_unit", json_string(q->amount_cents ? "cents" : "dollars"));
    json_object_set_new(p, "date_column", json_string(q->date_col));
    json_object_set_new(p, "date_format", json_string(date_format(q)));
    json_object_set_new(p, "period", json_string(period_word[q->period]));
    json_object_set_new(p, "period_format", json_string(period_format[q->period]));
    json_object_set_new(p, "order", json_string(q->descending ? "descending" : "ascending"));
    json_object_set_new(p, "revenue_unit", json_string(q->want_cents ? "cents" : "dollars"));
    json_object_set_new(p, "rounding",
                        json_string(!q->want_cents ? "none (whole cents)"
                                    : q->amount_cents ? "none" : "nearest cent"));
    json_object_set_new(p, "null_amount", json_string("counts as 0"));
    json_t *out = json_array();
    json_array_append_new(out, json_string(q->out_period));
    json_array_append_new(out, json_string(q->out_revenue));
    json_object_set_new(p, "output_columns", out);
    return p;
}

/* ---- the template callbacks ------------------------------------------------ */

static int generate(struct vat_task *t, struct vat_rng *rng, struct vat_err *e)
{
    struct question *q = vat_xcalloc(1, sizeof *q);
    t->priv = q;
    t->priv_free = question_free;
    q->side = t->side;
    q->rows_min = vat_task_int(t, "rows_min");
    q->rows_max = vat_task_int(t, "rows_max");
    draw_question(q, rng, vat_task_real(t, "hardness"));
    apply_question(q, vat_task_question(t, N_QUESTIONS));
    build_schema(q);

    const char *tabs[1] = {q->table};
    struct vat_sqlgen_set set = {
        .schema_sql = q->schema,
        .tables = tabs,
        .ntables = 1,
        .nvariants = (int)vat_task_int(t, "variants"),
        .fill = fill,
        .ctx = q,
    };
    if (vat_sqlgen_write_set(t, rng, &set, e) != 0)
        return -1;
    t->spec = vat_sqlgen_spec(t, tabs, 1, true, REL_TOL, ABS_TOL);
    t->params = build_params(q);
    return build_prompt(t, q, e);
}

static int reference(struct vat_task *t, struct vat_err *e)
{
    const struct question *q = t->priv;
    char *gold = build_query(q, true);
    return vat_sqlgen_accept_gold(t, gold, true, REL_TOL, ABS_TOL, e);
}

/* ---- the second derivation: plain row reads aggregated in C ---------------- */

struct bucket {
    char key[32];
    int64_t cents;
};

static int cmp_bucket(const void *a, const void *b)
{
    return strcmp(((const struct bucket *)a)->key, ((const struct bucket *)b)->key);
}

/* Reads "YYYY-MM" off the front of an ISO date or timestamp. */
static int parse_year_month(const char *s, int *y, int *m)
{
    if (!s || strlen(s) < 7 || s[4] != '-')
        return -1;
    for (int i = 0; i < 7; i++)
        if (i != 4 && (s[i] < '0' || s[i] > '9'))
            return -1;
    *y = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
    *m = (s[5] - '0') * 10 + (s[6] - '0');
    return *m >= 1 && *m <= 12 ? 0 : -1;
}

/* An amount cell in cents: NULL is 0 (as the prompt says); dollars are
 * rounded to the cent they were written from. */
static int64_t cell_cents(const struct question *q, const struct vat_sqlgen_cell *v)
{
    if (v->type == SQLITE_INTEGER)
        return q->amount_cents ? v->i : v->i * 100;
    if (v->type == SQLITE_FLOAT)
        return q->amount_cents ? (int64_t)llround(v->d) : (int64_t)llround(v->d * 100.0);
    return 0;
}

static const char *cell_text(const struct vat_sqlgen_cell *v)
{
    return v->type == SQLITE_TEXT || v->type == SQLITE_BLOB ? v->s : NULL;
}

/* The periods' paid totals as derive_rows gathers them, row by row. */
struct derivation {
    const struct question *q;
    const char *rel;
    struct bucket *bk;
    size_t nb, cap;
};

/* A period key: "YYYY-MM", "YYYY-Qn" or "YYYY" (out holds 8 bytes). */
static void period_key(enum period p, int y, int m, char out[8])
{
    out[0] = (char)('0' + y / 1000 % 10);
    out[1] = (char)('0' + y / 100 % 10);
    out[2] = (char)('0' + y / 10 % 10);
    out[3] = (char)('0' + y % 10);
    out[4] = 0;
    if (p == PERIOD_MONTH) {
        out[4] = '-';
        out[5] = (char)('0' + m / 10);
        out[6] = (char)('0' + m % 10);
        out[7] = 0;
    } else if (p == PERIOD_QUARTER) {
        out[4] = '-';
        out[5] = 'Q';
        out[6] = (char)('0' + (m + 2) / 3);
        out[7] = 0;
    }
}

static int derive_row(void *ctx, size_t row, const struct vat_sqlgen_cell *cell,
                      struct vat_err *e)
{
    struct derivation *d = ctx;
    const struct question *q = d->q;
    const char *status = cell_text(&cell[0]);
    bool paid = false;
    for (int k = 0; status && k < q->npaid; k++)
        paid |= strcmp(status, q->paid[k]) == 0;
    if (!paid)
        return 0;
    int y, m;
    const char *date = cell_text(&cell[2]);
    if (parse_year_month(date, &y, &m) != 0)
        return vat_err_set(e, "vat: '%s' row %zu has the date '%s'", d->rel, row + 1,
                           date ? date : "");
    char key[8];
    period_key(q->period, y, m, key);
    size_t b = 0;
    while (b < d->nb && strcmp(d->bk[b].key, key) != 0)
        b++;
    if (b == d->nb) {
        if (d->nb == d->cap) {
            d->cap = d->cap ? 2 * d->cap : 16;
            d->bk = vat_xrealloc(d->bk, d->cap * sizeof *d->bk);
        }
        memset(&d->bk[b], 0, sizeof d->bk[b]);
        memcpy(d->bk[b].key, key, sizeof key);
        d->nb++;
    }
    d->bk[b].cents += cell_cents(q, &cell[1]);
    return 0;
}

static json_t *derive_rows(const void *question, const char *root, const char *rel,
                           struct vat_err *e)
{
    const struct question *q = question;
    const char *const want[3] = {q->status_col, q->amount_col, q->date_col};
    struct derivation d = {.q = q, .rel = rel};
    if (vat_sqlgen_scan_table(root, rel, q->table, want, 3, derive_row, &d, e) != 0) {
        free(d.bk);
        return NULL;
    }
    if (d.nb)
        qsort(d.bk, d.nb, sizeof *d.bk, cmp_bucket);
    json_t *out = json_array();
    for (size_t k = 0; k < d.nb; k++) {
        const struct bucket *x = &d.bk[q->descending ? d.nb - 1 - k : k];
        json_t *r = json_array();
        json_array_append_new(r, json_string(x->key));
        json_array_append_new(r, q->want_cents ? json_integer(x->cents)
                                               : json_real((double)x->cents / 100.0));
        json_array_append_new(out, r);
    }
    free(d.bk);
    return out;
}

static int confirm(const struct vat_task *t, struct vat_err *e)
{
    return vat_sqlgen_confirm(t, derive_rows, t->priv, REL_TOL, ABS_TOL, e);
}

static int trap_answer(struct vat_task *t, struct vat_err *e)
{
    /* The main fixture plants non-paid invoices with amounts, which
     * vat_sqlgen_set_trap proves change the result. */
    return vat_sqlgen_set_trap(t, build_query(t->priv, false), REL_TOL, ABS_TOL, e);
}

const struct vat_template vat_tmpl_sql_paid_revenue = {
    .version = VAT_TEMPLATE_V1,
    .name = "sql_paid_revenue",
    .family = "sql",
    .answer_kind = "sql",
    .trap = "Summing every invoice per period without the paid-status filter.",
    .summary = "One SQLite SELECT returning paid revenue per month, quarter or year, ordered by "
               "period.",
    .params = params,
    .default_count = 12,
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
