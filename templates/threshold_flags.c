/* threshold_flags.c — the threshold_flags analytics template: a bank's
 * accounts CSV (account_id, holder, account_type, branch, opened_on,
 * balance) and the ids of the accounts whose balance is at or above a
 * threshold T, ascending by byte order.  The trap compares with `>`;
 * every fixture holds balances exactly at T (often one cent either side
 * too), so the trap always misses an id.  Account ids are not zero-padded
 * and cross a power of ten, so byte order is not the numeric order of the
 * file.  In the program form (templates/progform.h) the answer is a
 * SELECT, checked on variant CSVs that hold T exactly, a cent either side,
 * blank balances and ids across a power of ten.  Exports
 * vat_tmpl_threshold_flags. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analytics.h"
#include "csvio.h"
#include "progform.h"
#include "prompt.h"
#include "template.h"
#include "trapmod.h"
#include "values.h"

#define TF_REL_TOL 1e-9
#define TF_ABS_TOL 1e-9

enum { C_ID, C_HOLDER, C_TYPE, C_BRANCH, C_OPENED, C_BALANCE, TF_NCOLS };
static const char *const tf_cols[TF_NCOLS] = {"account_id", "holder",    "account_type",
                                              "branch",     "opened_on", "balance"};

/* The question in both styles.  Natural: "at least T" includes T by
 * convention, and the ids come sorted as plain text: conventions stated. */
static const char *const tf_q_natural[] = {
    "Which accounts hold at least {thr}?",
    "Risk wants every account with a `balance` of {thr} or more. Which are they?",
    "Could you list the accounts whose balance is at least {thr}?",
    "Which of our accounts have {thr} or more in them?",
    "I need the accounts with at least {thr} on them.",
    "[[For the compliance check|For the premium-tier mailing|For the risk report]], which "
    "accounts have a balance of {thr} or more?",
};
/* The explicit question, ways of asking it; the rules that follow it are
 * the same. */
static const char *const tf_q_explicit[] = {
    "[[Question: which|Which]] accounts have a `balance` at or above {thr}?",
    "List the accounts whose `balance` is {thr} or more.",
    "Which `account_id` values belong to accounts with a `balance` of at least {thr}?",
    "Find every account whose `balance` reaches {thr} or exceeds it.",
    "Give the accounts with a `balance` of {thr} or more.",
};
static const char *const tf_r_explicit[] = {
    "An account whose balance is exactly {thr} counts. [[Give|List|Return]] their "
    "`account_id` values, each once, [[sorted ascending by byte order|in ascending byte "
    "order|ordered ascending by byte order]]: [[plain string comparison of the ids exactly as "
    "written|the ids compared as plain strings, exactly as written|a plain string comparison "
    "of the ids as written]], not numeric order ([[so `X-10` comes before `X-9`|`X-10` comes "
    "before `X-9`]]).",
};
/* The columns as the data description lists them, in each style. */
static const struct vat_prompt_col tf_cols_natural[] = {
    {"account_id", "[[a text code|a code, as text|the account code, text]]"},
    {"holder", ""},
    {"account_type", ""},
    {"branch", ""},
    {"opened_on", "[[YYYY-MM-DD|the opening date, YYYY-MM-DD]]"},
    {"balance", "[[current balance, two decimals; negative when overdrawn|the current balance "
        "with two decimals, negative when overdrawn|what is in the account now, two "
        "decimals, below zero when overdrawn]]"},
};
static const struct vat_prompt_col tf_cols_explicit[] = {
    {"account_id", ""},
    {"holder", "[[|the account holder]]"},
    {"account_type", ""},
    {"branch", ""},
    {"opened_on", "[[YYYY-MM-DD|the opening date, YYYY-MM-DD]]"},
    {"balance", "[[the current balance, a decimal with two places; negative when the account is "
        "overdrawn|the current balance, two decimal places, negative for an overdrawn "
        "account|the balance now, a decimal with two places that is negative when the "
        "account is overdrawn]]"},
};
static const char *const tf_giveaways[] = {
    "is exactly", "at or above", " counts.", "tolerance", NULL,
};
/* The boundary's trap, which a natural prompt never describes. */
static const char *const tf_defects[] = {
    "exactly at", "right at the", "on the threshold", "equal to the threshold", NULL,
};
static const char *const tf_answer_columns[] = {"account_id", "balance", NULL};
static const char *const tf_states_cmp[] = {"at least", "or more", NULL};
static const char *const tf_states_order[] = {
    "sorted as plain text (byte order)", "in plain-text order (byte order)",
    "ordered as plain text, byte by byte", NULL,
};
static const struct vat_convention tf_conventions[] = {
    {"comparison", tf_states_cmp},
    {"order", tf_states_order},
    {NULL, NULL},
};

static const struct vat_param tf_params[] = {
    {.name = "rows_min", .type = VAT_PARAM_INT, .def = 20, .min = 8, .max = 2000,
     .doc = "fewest data rows in a fixture", .role = VAT_PARAM_ROWS},
    {.name = "rows_max", .type = VAT_PARAM_INT, .def = 150, .min = 8, .max = 2000,
     .doc = "most data rows in a fixture", .role = VAT_PARAM_ROWS},
    {.name = "at_threshold_max", .type = VAT_PARAM_INT, .def = 3, .min = 1, .max = 6,
     .doc = "most balances exactly at T (at least one is always planted)"},
    {.name = "near_miss_max", .type = VAT_PARAM_INT, .def = 2, .min = 0, .max = 4,
     .doc = "most balances one cent below T, and as many one cent above"},
    {.name = "overdrawn_share", .type = VAT_PARAM_REAL, .def = 0.08, .min = 0, .max = 0.5,
     .doc = "share of accounts with a negative balance"},
    VAT_PROGFORM_PARAM,
    {0},
};

/* Thresholds a compliance or marketing rule would name, in whole units. */
static const long tf_thresholds[] = {500,  1000,  2000,  2500,  5000,
                                     7500, 10000, 15000, 20000, 25000};

static const char *const tf_prefixes[] = {"AC-", "ACCT-", "A", "CHK-", "BA"};
static const char *const tf_types[] = {"checking", "savings", "business", "money market"};

/* What the generator planted, for confirm's cross-check and the
 * program form's variants. */
struct tf_priv {
    json_t *ids;        /* the ids at or above T, in byte order      */
    const char *prefix; /* the ids' prefix                           */
    long power;         /* the power of ten the ids' numbers cross   */
};

/* The question and what decides it, in the task's style (both answer
 * forms), for the threshold thr as the prompt writes it. */
static void tf_say_question(struct vat_buf *b, struct vat_task *t, const char *thr)
{
    const char *kv[] = {"thr", thr, NULL};
    if (vat_prompt_natural(t)) {
        VAT_PROMPT_PUT(b, t, 'q', tf_q_natural, kv);
    } else {
        VAT_PROMPT_PUT(b, t, 'q', tf_q_explicit, kv);
        vat_buf_putc(b, ' ');
        VAT_PROMPT_PUT(b, t, 'r', tf_r_explicit, kv);
    }
}

static void tf_priv_free(void *p)
{
    struct tf_priv *pv = p;
    json_decref(pv->ids);
    free(pv);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* Draws a balance in cents, independent of T: overdrawn now and then,
 * mostly a few hundred to a few thousand, a tail of large ones. */
static int64_t tf_balance(struct vat_rng *r, double overdrawn)
{
    if (vat_rng_chance(r, overdrawn))
        return -vat_gen_cents(r, 1, 250000);
    uint32_t k = vat_rng_below(r, 100);
    if (k < 38)
        return vat_gen_cents(r, 0, 200000);
    if (k < 70)
        return vat_gen_cents(r, 200000, 1500000);
    if (k < 92)
        return vat_gen_cents(r, 1500000, 6000000);
    return vat_gen_cents(r, 6000000, 50000000);
}

/* Picks T (in cents) among the round thresholds so that between 12% and
 * 50% of the drawn balances reach it, uniformly among those that do;
 * failing that, the one nearest 30%. */
static int64_t tf_pick_threshold(struct vat_rng *r, const int64_t *bal, size_t n)
{
    size_t nthr = sizeof tf_thresholds / sizeof tf_thresholds[0];
    size_t ok[sizeof tf_thresholds / sizeof tf_thresholds[0]], nok = 0, best = 0;
    double best_gap = 2;
    for (size_t i = 0; i < nthr; i++) {
        size_t hits = 0;
        for (size_t k = 0; k < n; k++)
            hits += bal[k] >= tf_thresholds[i] * 100;
        double share = (double)hits / (double)n;
        if (share >= 0.12 && share <= 0.5)
            ok[nok++] = i;
        double gap = share > 0.3 ? share - 0.3 : 0.3 - share;
        if (gap < best_gap)
            best_gap = gap, best = i;
    }
    size_t pick = nok ? ok[vat_rng_below(r, (uint32_t)nok)] : best;
    return (int64_t)tf_thresholds[pick] * 100;
}

/* The power of ten the account numbers of an n-row file cross. */
static long tf_power(size_t n)
{
    return n <= 200 ? 1000 : 10000;
}

/* Draws n distinct account numbers in ascending order, not zero-padded,
 * a quarter of them below a power of ten p and the rest from p up, so
 * that the ids differ in length and byte order differs from numeric
 * order. */
static long *tf_numbers(struct vat_rng *r, size_t n)
{
    long *num = vat_xcalloc(n, sizeof *num);
    long p = tf_power(n);
    size_t below = n / 4 ? n / 4 : 1;
    long x = p - (long)vat_rng_range(r, 1, 3);
    for (size_t i = 0; i < below; i++, x -= (long)vat_rng_range(r, 1, 3))
        num[i] = x;
    x = p + (long)vat_rng_range(r, 0, 5);
    for (size_t i = below; i < n; i++, x += (long)vat_rng_range(r, 1, 9))
        num[i] = x;
    qsort(num, n, sizeof *num, cmp_long);
    return num;
}

static bool tf_owned(int side, const char *prefix, long x)
{
    char text[48];
    int len = snprintf(text, sizeof text, "%s%ld", prefix, x);
    return len > 0 && vat_side_owns(side, text, (size_t)len);
}

/* Moves the ascending account numbers num[0..n) onto the task's side
 * (vat_side_owns of the id's text, so an account row of a train fixture
 * is never one of a test fixture): those below the power of ten p step
 * down from it, the others up from it, each to the nearest number on the
 * side, so every number stays on its side of p and they stay distinct
 * and ascending. */
static void tf_side_numbers(int side, const char *prefix, long p, long *num, size_t n)
{
    size_t below = 0;
    while (below < n && num[below] < p)
        below++;
    long last = p;
    for (size_t i = below; i-- > 0;) {
        long x = num[i] < last ? num[i] : last - 1;
        while (x > 1 && !tf_owned(side, prefix, x))
            x--;
        num[i] = last = x;
    }
    last = p - 1;
    for (size_t i = below; i < n; i++) {
        long x = num[i] > last ? num[i] : last + 1;
        while (!tf_owned(side, prefix, x))
            x++;
        num[i] = last = x;
    }
}

static int tf_generate(struct vat_task *t, struct vat_rng *r, struct vat_err *e)
{
    long rmin = vat_task_int(t, "rows_min"), rmax = vat_task_int(t, "rows_max");
    long at_max = vat_task_int(t, "at_threshold_max");
    long near_max = vat_task_int(t, "near_miss_max");
    double overdrawn = vat_task_real(t, "overdrawn_share");

    long nl = vat_rng_range(r, rmin, rmax);
    long n_at = vat_rng_range(r, 1, at_max);
    long n_below = vat_rng_range(r, 0, near_max), n_above = vat_rng_range(r, 0, near_max);
    /* One clearly above T and one clearly below, beside the planted ones. */
    long planted = n_at + n_below + n_above + 2;
    size_t n = nl < planted + 4 ? (size_t)planted + 4 : (size_t)nl;

    int64_t *bal = vat_xcalloc(n, sizeof *bal);
    for (size_t k = 0; k < n; k++)
        bal[k] = tf_balance(r, overdrawn);
    int64_t t_cents = tf_pick_threshold(r, bal, n);
    /* The planted balances overwrite randomly placed rows. */
    size_t *slot = vat_xcalloc(n, sizeof *slot);
    for (size_t k = 0; k < n; k++)
        slot[k] = k;
    vat_rng_shuffle(r, slot, n, sizeof *slot);
    size_t k = 0;
    for (long i = 0; i < n_at; i++)
        bal[slot[k++]] = t_cents;
    for (long i = 0; i < n_below; i++)
        bal[slot[k++]] = t_cents - 1;
    for (long i = 0; i < n_above; i++)
        bal[slot[k++]] = t_cents + 1;
    bal[slot[k++]] = vat_gen_cents(r, t_cents + 100, 3 * t_cents);
    bal[slot[k++]] = vat_gen_cents(r, t_cents / 10, t_cents - 100);
    free(slot);

    long *num = tf_numbers(r, n);
    const char *prefix = VAT_PICK(r, tf_prefixes);
    tf_side_numbers(t->side, prefix, tf_power(n), num, n);
    const char *branches[4];
    size_t nbranch = vat_gen_distinct(r, "city", branches, 4);
    if (nbranch == 0) {
        free(bal);
        free(num);
        return vat_err_set(e, "%s: the 'city' word list is empty", t->id);
    }
    /* Accounts are numbered as they are opened: dates ascend with ids. */
    int32_t first_day = vat_date_from_civil(2009, 1, 1);
    int32_t last_day = vat_date_from_civil(2024, 6, 30);
    int32_t *days = vat_gen_days_sorted(r, n, first_day, last_day);

    struct vat_csv c = VAT_CSV_INIT;
    vat_csv_add_row(&c, tf_cols, TF_NCOLS);
    char **hits = vat_xcalloc(n, sizeof *hits);
    size_t nhits = 0;
    char money[32], date[11], holder[96];
    for (size_t i = 0; i < n; i++) {
        char *id = vat_xasprintf("%s%ld", prefix, num[i]);
        if (vat_rng_chance(r, 0.25))
            vat_gen_company(r, holder, sizeof holder);
        else
            vat_gen_person(r, holder, sizeof holder);
        vat_csv_row_begin(&c);
        vat_csv_add(&c, id);
        vat_csv_add(&c, holder);
        vat_csv_add(&c, VAT_PICK(r, tf_types));
        vat_csv_add(&c, branches[vat_rng_below(r, (uint32_t)nbranch)]);
        vat_csv_add(&c, vat_fmt_date(days[i], date));
        vat_csv_add(&c, vat_fmt_cents(bal[i], money, sizeof money));
        if (bal[i] >= t_cents)
            hits[nhits++] = id;
        else
            free(id);
    }
    free(days);
    free(num);
    free(bal);

    qsort(hits, nhits, sizeof *hits, cmp_str);
    struct tf_priv *pv = vat_xcalloc(1, sizeof *pv);
    pv->prefix = prefix;
    pv->power = tf_power(n);
    pv->ids = json_array();
    for (size_t i = 0; i < nhits; i++) {
        json_array_append_new(pv->ids, json_string(hits[i]));
        free(hits[i]);
    }
    free(hits);
    t->priv = pv;
    t->priv_free = tf_priv_free;

    /* the params are known before the file is written: the trap modules
     * plant their copies by them */
    t->params = json_pack("{s:s, s:o, s:s, s:s, s:s}", "column", "balance", "threshold",
                          json_real((double)t_cents / 100.0), "comparison", ">=", "returns",
                          "account_id", "order", "ascending byte order");
    if (vat_an_write_csv(t, &c, ".csv", "main", e) < 0) {
        vat_csv_release(&c);
        return -1;
    }

    char thr[32];
    vat_fmt_cents(t_cents, thr, sizeof thr);
    struct vat_buf b = VAT_BUF_INIT;
    bool nat = vat_prompt_natural(t);
    struct vat_buf cols = VAT_BUF_INIT;
    vat_prompt_cols(&cols, t, nat ? tf_cols_natural : tf_cols_explicit,
                    VAT_N_OF(tf_cols_natural), NULL);
    const char *kv[] = {
        "topic", "[[our account balances|the bank's accounts|the customer accounts]]",
        "what", nat ? "[[the bank's account list|our accounts{#pl}|the accounts we hold{#pl}]]"
                    : "[[an export of a bank's accounts|a bank's account list|the accounts of a "
                      "bank{#pl}]]",
        "unit", "account",
        "cols", cols.data,
        NULL,
    };
    vat_prompt_open(&b, t, kv);
    vat_prompt_data(&b, t, kv);
    vat_buf_release(&cols);
    vat_buf_puts(&b, "\n\n");
    tf_say_question(&b, t, thr);
    vat_buf_puts(&b, "\n\n");
    if (nat) {
        const char *akv[] = {"order", vat_prompt_state(t, "order"), NULL};
        char *shape = vat_prompt_text(t, 's',
                                      "[[a JSON array of their `account_id`s, each once|a "
                                      "JSON array of the matching `account_id`s, no id "
                                      "twice]], {order}, [[like|for example|e.g.]] [\"<id>\", "
                                      "\"<next id>\"]",
                                      akv);
        vat_prompt_answer(&b, t, shape);
        free(shape);
    } else {
        vat_prompt_answer(&b, t, "[[an array of the ids as JSON strings in that order|a JSON "
                                 "array of the ids, as strings, in that order]], [[for "
                                 "example|like]] [\"<id>\", \"<next id>\"]");
    }
    vat_buf_puts(&b, "\n\n");
    vat_an_prompt_csv(&b, t, 0, &c);
    t->prompt = vat_buf_detach(&b);
    vat_csv_release(&c);


    struct vat_an_spec s = {.shape = "list", .items = "string", .ordered = true, .unique = true,
                            .rel_tol = TF_REL_TOL, .abs_tol = TF_ABS_TOL};
    t->spec = vat_an_value_spec(&s);
    return 0;
}

/* T in cents, as the task's params state it (the prompt's threshold, a
 * positive amount); 0, or -1 with e set. */
static int tf_threshold(const struct vat_task *t, int64_t *t_cents, struct vat_err *e)
{
    double x;
    if (vat_an_param_real(t, "threshold", 0.01, 1e12, &x, e) != 0)
        return -1;
    *t_cents = (int64_t)(x * 100.0 + 0.5);
    return 0;
}

/* The ids whose balance is at or above T (strict: above only) over the
 * rows read back from the fixture, in byte order. */
static json_t *tf_select_file(const struct vat_task *t, bool strict, struct vat_err *e)
{
    int64_t t_cents;
    if (tf_threshold(t, &t_cents, e) != 0)
        return NULL;
    struct vat_csv c = VAT_CSV_INIT;
    if (vat_an_read_csv(t, 0, tf_cols, TF_NCOLS, &c, e) != 0)
        return NULL;
    const char **all = vat_xcalloc(c.nrows, sizeof *all);
    const char **hit = vat_xcalloc(c.nrows, sizeof *hit);
    size_t nall = 0, nhit = 0;
    json_t *out = NULL;
    for (size_t i = 1; i < c.nrows; i++) {
        const char *id = vat_csv_get(&c, i, C_ID);
        int64_t cents;
        if (!id[0]) {
            vat_err_set(e, "%s: '%s' record %zu: the account_id is blank", t->id,
                        t->fixture[0].path, i + 1);
            goto done;
        }
        if (vat_an_csv_cents(t, 0, &c, i, C_BALANCE, &cents, e) != 0)
            goto done;
        all[nall++] = id;
        if (strict ? cents > t_cents : cents >= t_cents)
            hit[nhit++] = id;
    }
    /* A repeated id would make "each once" ambiguous: refuse the file. */
    qsort(all, nall, sizeof *all, cmp_str);
    for (size_t i = 1; i < nall; i++) {
        if (strcmp(all[i - 1], all[i]) == 0) {
            vat_err_set(e, "%s: '%s': account_id '%s' repeats", t->id, t->fixture[0].path,
                        all[i]);
            goto done;
        }
    }
    qsort(hit, nhit, sizeof *hit, cmp_str);
    out = json_array();
    for (size_t i = 0; i < nhit; i++)
        json_array_append_new(out, json_string(hit[i]));
done:
    free(all);
    free(hit);
    vat_csv_release(&c);
    return out;
}

static int tf_reference(struct vat_task *t, struct vat_err *e)
{
    return vat_an_gold_from(t, tf_select_file(t, false, e),
                            "no balance is at or above the threshold", e);
}

/* SQL over the CSV loaded into SQLite: balance as REAL compared with T
 * written as the same two-place decimal (exact: two decimals at these
 * magnitudes never collide as doubles), ids ordered by SQLite's BINARY
 * collation, which is byte order; then the generator's planted list. */
static int tf_confirm(const struct vat_task *t, struct vat_err *e)
{
    static const char *const types[TF_NCOLS] = {"TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "REAL"};
    int64_t t_cents;
    if (tf_threshold(t, &t_cents, e) != 0)
        return -1;
    char thr[32];
    char *sql = vat_xasprintf("SELECT account_id FROM accounts WHERE balance >= %s "
                              "ORDER BY account_id",
                              vat_fmt_cents(t_cents, thr, sizeof thr));
    struct vat_an_query q = {.table = "accounts", .types = types, .sql = sql, .kind = VAT_AN_LIST};
    int rc = vat_an_confirm_query(t, &q, 0, 0, e);
    free(sql);
    if (rc != 0 || !t->priv)
        return rc;
    const struct tf_priv *pv = t->priv;
    return vat_an_confirm_gold(t, pv->ids, "the generator's planted ids", 0, 0, e);
}

static int tf_trap(struct vat_task *t, struct vat_err *e)
{
    return vat_an_trap_from(t, tf_select_file(t, true, e));
}

/* ---- the program form ------------------------------------------------------ */

static const char *const tf_col_types[TF_NCOLS] = {"TEXT", "TEXT", "TEXT",
                                                   "TEXT", "TEXT", "REAL"};
static const char *const tf_tables[] = {"accounts",          "bank_accounts",  "account_export",
                                        "balances",          "accounts_csv",   "customer_accounts",
                                        "deposit_accounts",  "account_list"};
static const char *const tf_outs[] = {"account_id", "flagged_account", "account",    "id",
                                      "flagged_id", "acct",            "account_ref", "flagged"};

/* T as the prompt writes it ("2500.00"), in buf; NULL when the task's
 * params lack it. */
static const char *tf_thr_text(const struct vat_task *t, char *buf, size_t cap)
{
    struct vat_err e = {{0}};
    int64_t t_cents;
    if (tf_threshold(t, &t_cents, &e) != 0)
        return NULL;
    return vat_fmt_cents(t_cents, buf, cap);
}

static char *tf_pf_question(struct vat_task *t)
{
    char thr[32];
    const char *s = tf_thr_text(t, thr, sizeof thr);
    struct vat_buf b = VAT_BUF_INIT;
    tf_say_question(&b, t, s ? s : "?");
    return vat_buf_detach(&b);
}

static char *tf_pf_shape(struct vat_task *t, const struct vat_pf_names *n)
{
    char thr[32];
    const char *s = tf_thr_text(t, thr, sizeof thr);
    const char *kv[] = {"out", n->out, "thr", s ? s : "?", NULL};
    if (vat_prompt_natural(t)) {
        const char *okv[] = {"out", n->out, "order", vat_prompt_state(t, "order"), NULL};
        return vat_prompt_text(t, 's',
                               "[[Return|It should return|I'd like]] one column, `{out}` (the "
                               "`account_id` as stored), one row per account asked for, "
                               "{order}; an account [[with no balance|whose balance is "
                               "empty]] is not listed.",
                               okv);
    }
    return vat_prompt_text(t, 's',
                           "[[It must return|The result must have|Return]] one column, `{out}` "
                           "([[the `account_id` as stored|the stored `account_id`]]), [[one "
                           "row per account whose `balance` is at or above {thr} and no other "
                           "rows|a row for each account with a `balance` of {thr} or more and "
                           "nothing else|exactly the accounts whose `balance` reaches {thr}, "
                           "one row each]], [[ordered|sorted]] by `account_id` ascending "
                           "([[SQLite's default text order, which is byte order|byte order, "
                           "SQLite's default for text|the default text order of SQLite: byte "
                           "order]]). [[An account whose `balance` is blank (NULL) has no "
                           "balance and is not listed|A blank (NULL) `balance` is no balance: "
                           "that account is not listed|An account with a blank (NULL) "
                           "`balance` has none and stays out]].",
                           kv);
}

static char *tf_pf_query(const struct vat_task *t, const struct vat_pf_names *n, const char *op)
{
    char thr[32];
    const char *s = tf_thr_text(t, thr, sizeof thr);
    return vat_xasprintf("SELECT account_id AS %s\nFROM %s\nWHERE balance %s %s\n"
                         "ORDER BY account_id",
                         n->out, n->table, op, s ? s : "NULL");
}

static char *tf_pf_gold(const struct vat_task *t, const struct vat_pf_names *n)
{
    return tf_pf_query(t, n, ">=");
}

/* The named mistake: > where >= is right. */
static char *tf_pf_trap(const struct vat_task *t, const struct vat_pf_names *n)
{
    return tf_pf_query(t, n, ">");
}

/* Variant k: new accounts with the task's id prefix, numbered across the
 * other power of ten than the main fixture's (1000 or 10000), so no id
 * repeats one of the main fixture and gold's rows differ from its rows.
 * Every variant has balances exactly at T (the trap drops them), one a
 * cent below and one a cent above (a comparison off by a cent, or a
 * rounded balance, is seen), an account at T with a number below the
 * power of ten and one above T with a number above it (byte order is not
 * the file's numeric order: a query without ORDER BY, or ordering by
 * number, is seen), an overdrawn balance, a blank balance (NULL: no
 * balance, never listed) and blank holders.  Variant 1 adds a balance of
 * 0.00, variant 2 one of ten times T and more, variant 3 three accounts
 * exactly at T. */
static int tf_pf_variant(const struct vat_task *t, struct vat_rng *r, int k, struct vat_csv *c,
                         struct vat_err *e)
{
    const struct tf_priv *pv = t->priv;
    int64_t tc;
    if (!pv || !pv->prefix || tf_threshold(t, &tc, e) != 0)
        return vat_err_set(e, "%s: variants need the generator's ids and threshold", t->id);
    long p = pv->power == 1000 ? 10000 : 1000;
    size_t n = (size_t)vat_rng_range(r, 14, 24);
    size_t nb = 2 + (size_t)vat_rng_below(r, (uint32_t)(n / 4));
    /* Balances: [0] at T goes below the power of ten, [1] a cent above T
     * above it, the rest anywhere. */
    int64_t *pool = vat_xcalloc(n, sizeof *pool);
    size_t np = 0;
    pool[np++] = tc;
    pool[np++] = tc + 1;
    pool[np++] = tc - 1;
    pool[np++] = vat_gen_cents(r, tc + 100, 3 * tc);
    pool[np++] = -vat_gen_cents(r, 1, 250000);
    pool[np++] = INT64_MIN; /* blank */
    long n_at = k == 3 ? 2 : (long)vat_rng_below(r, 2);
    for (long i = 0; i < n_at; i++)
        pool[np++] = tc;
    if (k == 1)
        pool[np++] = 0;
    if (k == 2)
        pool[np++] = vat_gen_cents(r, 10 * tc, 20 * tc);
    double overdrawn = vat_task_real(t, "overdrawn_share");
    while (np < n)
        pool[np++] = tf_balance(r, overdrawn);
    vat_rng_shuffle(r, pool + 2, n - 2, sizeof *pool);
    int64_t *bal = vat_xcalloc(n, sizeof *bal);
    bool *set = vat_xcalloc(n, sizeof *set);
    size_t ia = (size_t)vat_rng_below(r, (uint32_t)nb);
    size_t ib = nb + (size_t)vat_rng_below(r, (uint32_t)(n - nb));
    bal[ia] = pool[0];
    bal[ib] = pool[1];
    set[ia] = set[ib] = true;
    for (size_t i = 0, j = 2; i < n; i++)
        if (!set[i])
            bal[i] = pool[j++];
    free(pool);
    free(set);

    /* Numbers ascending, nb of them below p. */
    long *num = vat_xcalloc(n, sizeof *num);
    long x = p;
    for (size_t i = nb; i-- > 0;) {
        x -= (long)vat_rng_range(r, 1, 3);
        num[i] = x;
    }
    x = p + (long)vat_rng_range(r, 0, 5);
    for (size_t i = nb; i < n; i++, x += (long)vat_rng_range(r, 1, 9))
        num[i] = x;
    tf_side_numbers(t->side, pv->prefix, p, num, n);

    const char *branches[4];
    size_t nbranch = vat_gen_distinct(r, "city", branches, 4);
    int32_t *days = vat_gen_days_sorted(r, n, vat_date_from_civil(2009, 1, 1),
                                        vat_date_from_civil(2024, 6, 30));
    vat_csv_add_row(c, tf_cols, TF_NCOLS);
    char money[32], date[11], holder[96];
    for (size_t i = 0; i < n; i++) {
        if (vat_rng_chance(r, 0.25))
            vat_gen_company(r, holder, sizeof holder);
        else
            vat_gen_person(r, holder, sizeof holder);
        bool blank_holder = vat_rng_chance(r, 0.1);
        const char *type = VAT_PICK(r, tf_types);
        const char *branch = nbranch ? branches[vat_rng_below(r, (uint32_t)nbranch)] : "Main";
        vat_csv_row_begin(c);
        vat_csv_addf(c, "%s%ld", pv->prefix, num[i]);
        vat_csv_add(c, blank_holder ? "" : holder);
        vat_csv_add(c, type);
        vat_csv_add(c, branch);
        vat_csv_add(c, vat_fmt_date(days[i], date));
        vat_csv_add(c, bal[i] == INT64_MIN ? "" : vat_fmt_cents(bal[i], money, sizeof money));
    }
    free(days);
    free(num);
    free(bal);
    return 0;
}

static const struct vat_progform tf_progform = {
    .tables = tf_tables,
    .ntables = sizeof tf_tables / sizeof *tf_tables,
    .outs = tf_outs,
    .nouts = sizeof tf_outs / sizeof *tf_outs,
    .columns = tf_cols,
    .types = tf_col_types,
    .ncols = TF_NCOLS,
    .ordered = true,
    .kind = VAT_AN_LIST,
    .rel_tol = TF_REL_TOL,
    .abs_tol = TF_ABS_TOL,
    .nvariants = 3,
    .question = tf_pf_question,
    .shape = tf_pf_shape,
    .gold_sql = tf_pf_gold,
    .trap_sql = tf_pf_trap,
    .variant = tf_pf_variant,
};

/* The accounts at or above the threshold: skipping one drops its id from
 * the list, a test copy of one adds an id.  (No duplicates module: a
 * repeated account_id makes "each once" ambiguous, and the reader
 * refuses the file.) */
static void tf_targets(const struct vat_task *t, const struct vat_csv *c, unsigned m, bool *is)
{
    (void)m;
    double thr = json_number_value(json_object_get(t->params, "threshold"));
    int col = vat_csv_col(c, 0, "balance");
    for (size_t i = 1; i < c->nrows && col >= 0; i++) {
        double x;
        is[i] = vat_trapmod_number(vat_csv_get(c, i, (size_t)col), &x) && x >= thr;
    }
}

/* Balances are decimals the threshold compares; account ids unique. */
static const struct vat_trapmods tf_modules = {
    .amount = "balance",
    .id = "account_id",
    .totals = true,
    .total = "balance",
    .targets = tf_targets};

const struct vat_template vat_tmpl_threshold_flags = {
    .version = VAT_TEMPLATE_V1,
    .name = "threshold_flags",
    .family = "analytics",
    .answer_kind = "value",
    .trap = "Comparing with > where >= is right, leaving out the balances exactly at T.",
    .summary = "Ids of the accounts whose balance is at or above a threshold, in byte order.",
    .params = tf_params,
    .default_count = 12,
    .generate = tf_generate,
    .reference = tf_reference,
    .confirm = tf_confirm,
    .trap_answer = tf_trap,
    .check = vat_check_task,
    .giveaways = tf_giveaways,
    .answer_columns = tf_answer_columns,
    .progform = &tf_progform,
    .conventions = tf_conventions,
    .defects = tf_defects,
    .modules = &tf_modules,
};
