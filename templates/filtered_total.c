/* filtered_total.c — the filtered_total analytics template: a ledger CSV
 * (entry_id, posted_on, account, kind, amount, memo) with signed amounts,
 * and the total magnitude (sum of absolute values) of the `adjustment`
 * entries of one account.  The trap forgets abs() and sums the signed
 * amounts; every fixture holds a negative adjustment of that account, so
 * the trap always falls short.  Exports vat_tmpl_filtered_total. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "analytics.h"
#include "csvio.h"
#include "prompt.h"
#include "progform.h"
#include "sqlgen.h"
#include "template.h"
#include "trapmod.h"
#include "values.h"

#define FT_MAX_ACCOUNTS 8
#define FT_REL_TOL 1e-9
#define FT_ABS_TOL 1e-6

enum { C_ID, C_DATE, C_ACCOUNT, C_KIND, C_AMOUNT, C_MEMO, FT_NCOLS };
static const char *const ft_cols[FT_NCOLS] = {"entry_id", "posted_on", "account",
                                              "kind",     "amount",    "memo"};
static const char ft_adjustment[] = "adjustment";

/* The question in both styles.  Natural: "gross" is the accountant's word
 * for the sum of the sizes, debits and credits alike: the convention,
 * stated. */
static const char *const ft_q_natural[] = {
    "What is the gross amount of the {kind} entries on account `{account}`?",
    "Audit wants the gross value of all {kind}s posted to `{account}`. What is it?",
    "How much was booked as {kind}s on `{account}`, gross?",
    "Could you give me the gross {kind} total for account `{account}`?",
    "I need the gross total of the {kind}s on `{account}`.",
    "[[For the audit file|For the quarter-end review|For the controller]], what do the "
    "{kind}s on account `{account}` come to, gross?",
};
static const char *const ft_c_natural[] = {
    "By gross I mean {gross}.",
    "{^gross}.",
    "[[Gross here means|That is]] {gross}.",
    "(Gross: {gross}.)",
};
/* The explicit question, ways of asking it; the rules that follow it are
 * the same. */
static const char *const ft_q_explicit[] = {
    "[[Question: what|What]] is the total magnitude of the `{kind}` entries of the account "
    "`{acct}`, that is the sum of the absolute values of `amount` over the rows whose "
    "`account` is exactly `{acct}` and whose `kind` is exactly `{kind}`?",
    "Over the rows whose `account` is exactly `{acct}` and whose `kind` is exactly "
    "`{kind}`, what do the absolute values of `amount` sum to (the total magnitude of the "
    "account's `{kind}` entries)?",
    "Sum the absolute values of `amount` over the rows whose `account` is exactly `{acct}` "
    "and whose `kind` is exactly `{kind}`: what total magnitude do the `{kind}` entries of "
    "`{acct}` reach?",
    "Compute the total magnitude of account `{acct}`'s `{kind}` entries: the sum of the "
    "absolute values of `amount` over the rows whose `account` is exactly `{acct}` and "
    "whose `kind` is exactly `{kind}`.",
};
static const char *const ft_r_explicit[] = {
    "[[A negative adjustment counts by its size|Negative adjustments count by their "
    "size|An adjustment below zero counts by its size]]: an amount of -5.00 adds 5.00. [[Sum "
    "exactly|Add up exactly]][[:|;]] [[the total is a number with at most two decimals|the "
    "total has at most two decimals|the total carries two decimals at most]].",
};
/* The columns as the data description lists them, in each style. */
static const struct vat_prompt_col ft_cols_natural[] = {
    {"entry_id", ""},
    {"posted_on", "[[YYYY-MM-DD|the posting date, YYYY-MM-DD]]"},
    {"account", "[[|the ledger account]]"},
    {"kind", "{kinds}"},
    {"amount", "[[signed, two decimals: credits positive, debits negative|two decimals, credits "
        "positive and debits negative|signed with two decimals, a credit positive and a "
        "debit negative]]"},
    {"memo", "[[|free text]]"},
};
static const struct vat_prompt_col ft_cols_explicit[] = {
    {"entry_id", ""},
    {"posted_on", "[[YYYY-MM-DD|the posting date, YYYY-MM-DD]]"},
    {"account", "[[the ledger account|the account posted to]]"},
    {"kind", "{kinds}"},
    {"amount", "[[signed, a decimal with two places: positive amounts credit the account, "
        "negative amounts debit it|a signed decimal with two places, positive for a "
        "credit and negative for a debit|signed, two decimal places; a positive amount "
        "credits the account and a negative one debits it]]"},
    {"memo", ""},
};
static const char *const ft_giveaways[] = {
    "absolute value", "by its size", "adds 5.00", "magnitude", "is exactly", "tolerance",
    "Sum exactly", NULL,
};
/* The signs' trap, which a natural prompt never describes. */
static const char *const ft_defects[] = {
    "negative adjustment", "some are negative", "reversal", "cancel out", "net out", NULL,
};
static const char *const ft_answer_columns[] = {"account", "kind", "amount", NULL};
static const char *const ft_states_gross[] = {
    "debits and credits both count at their full size",
    "every entry adds its size, debit or credit",
    "debits add as much as credits of the same size", NULL,
};
static const struct vat_convention ft_conventions[] = {
    {"measure", ft_states_gross},
    {NULL, NULL},
};

static const struct vat_param ft_params[] = {
    {.name = "rows_min", .type = VAT_PARAM_INT, .def = 20, .min = 5, .max = 2000,
     .doc = "fewest data rows in a fixture", .role = VAT_PARAM_ROWS},
    {.name = "rows_max", .type = VAT_PARAM_INT, .def = 120, .min = 5, .max = 2000,
     .doc = "most data rows in a fixture", .role = VAT_PARAM_ROWS},
    {.name = "accounts_min", .type = VAT_PARAM_INT, .def = 2, .min = 2, .max = FT_MAX_ACCOUNTS,
     .doc = "fewest distinct accounts"},
    {.name = "accounts_max", .type = VAT_PARAM_INT, .def = 5, .min = 2, .max = FT_MAX_ACCOUNTS,
     .doc = "most distinct accounts"},
    {.name = "adjustment_share", .type = VAT_PARAM_REAL, .def = 0.15, .min = 0.02, .max = 0.6,
     .doc = "chance that an entry outside the planted rows is an adjustment"},
    {.name = "negative_share", .type = VAT_PARAM_REAL, .def = 0.5, .min = 0.1, .max = 0.9,
     .doc = "chance that an adjustment outside the planted rows is negative"},
    {.name = "positive_adjustment_chance", .type = VAT_PARAM_REAL, .def = 0.8, .min = 0,
     .max = 1, .doc = "chance that a positive adjustment of the asked account is planted too"},
    VAT_PROGFORM_PARAM,
    {0},
};

/* What the generator planted, for confirm's cross-check. */
struct ft_priv {
    int64_t magnitude; /* sum of |amount| of the asked account's adjustments, cents */
    const char *accounts[FT_MAX_ACCOUNTS]; /* [0] is the asked one; for variants */
    int nacc;
};

/* The question and what decides it, in the task's style (both answer
 * forms), for the asked account. */
static void ft_say_question(struct vat_buf *b, struct vat_task *t, const char *asked)
{
    if (vat_prompt_natural(t)) {
        const char *kv[] = {"account", asked, "kind", ft_adjustment, NULL};
        VAT_PROMPT_PUT(b, t, 'q', ft_q_natural, kv);
        vat_buf_putc(b, ' ');
        const char *ckv[] = {"gross", vat_prompt_state(t, "measure"), NULL};
        VAT_PROMPT_PUT(b, t, 'c', ft_c_natural, ckv);
    } else {
        const char *kv[] = {"kind", ft_adjustment, "acct", asked, NULL};
        VAT_PROMPT_PUT(b, t, 'q', ft_q_explicit, kv);
        vat_buf_putc(b, ' ');
        VAT_PROMPT_PUT(b, t, 'r', ft_r_explicit, NULL);
    }
}

/* An entry kind: its sign (+1, -1, or 0 for either), its cents range,
 * its weight among the random rows and its usual memos. */
struct ft_kind {
    const char *name;
    int sign;
    int64_t lo, hi;
    uint32_t weight;
    const char *memo[3];
};

enum { K_DEPOSIT, K_WITHDRAWAL, K_FEE, K_INTEREST, K_TRANSFER, K_ADJUSTMENT, FT_NKINDS };
static const struct ft_kind ft_kinds[FT_NKINDS] = {
    {"deposit", 1, 5000, 500000, 6, {"customer payment", "cash deposit", "wire received"}},
    {"withdrawal", -1, 2000, 300000, 6, {"vendor payment", "cash withdrawal", "wire sent"}},
    {"fee", -1, 100, 4500, 3, {"monthly service fee", "wire fee", "card processing fee"}},
    {"interest", 1, 5, 12000, 2, {"interest credit", "interest credit", "interest accrual"}},
    {"transfer", 0, 10000, 800000, 3, {"internal transfer", "sweep", "internal transfer"}},
    {"adjustment", 0, 1, 40000, 0, {"correction of entry", "reversal of duplicate posting",
                                    "bank error correction"}},
};

struct ft_row {
    int account;
    int kind;
    int64_t cents; /* signed */
};

static int64_t ft_adjust_cents(struct vat_rng *r, bool negative)
{
    /* Most corrections are small; a few undo a whole posting. */
    int64_t hi = vat_rng_chance(r, 0.7) ? 5000 : ft_kinds[K_ADJUSTMENT].hi;
    int64_t c = vat_gen_cents(r, ft_kinds[K_ADJUSTMENT].lo, hi);
    return negative ? -c : c;
}

/* Draws the rows: a negative adjustment of the asked account (account 0),
 * maybe a positive one, an adjustment of another account and a fee of the
 * asked account as decoys; the rest at random. */
static struct ft_row *ft_draw_rows(struct vat_rng *r, size_t n, int nacc, double adj_share,
                                   double neg_share, double pos_chance)
{
    struct ft_row *rows = vat_xcalloc(n, sizeof *rows);
    size_t k = 0;
    rows[k++] = (struct ft_row){0, K_ADJUSTMENT, ft_adjust_cents(r, true)};
    if (vat_rng_chance(r, pos_chance))
        rows[k++] = (struct ft_row){0, K_ADJUSTMENT, ft_adjust_cents(r, false)};
    /* the account, then the amount: one draw per statement */
    int acc = 1 + (int)vat_rng_below(r, (uint32_t)(nacc - 1));
    rows[k++] = (struct ft_row){acc, K_ADJUSTMENT, ft_adjust_cents(r, vat_rng_chance(r, 0.5))};
    rows[k++] = (struct ft_row){0, K_FEE, -vat_gen_cents(r, ft_kinds[K_FEE].lo,
                                                         ft_kinds[K_FEE].hi)};
    uint32_t weight[FT_NKINDS];
    for (int i = 0; i < FT_NKINDS; i++)
        weight[i] = ft_kinds[i].weight;
    for (; k < n; k++) {
        /* The asked account is the busiest one, as a main account is. */
        rows[k].account = vat_rng_chance(r, 0.35) ? 0 : (int)vat_rng_below(r, (uint32_t)nacc);
        if (vat_rng_chance(r, adj_share)) {
            rows[k].kind = K_ADJUSTMENT;
            rows[k].cents = ft_adjust_cents(r, vat_rng_chance(r, neg_share));
            continue;
        }
        int g = (int)vat_rng_weighted(r, weight, FT_NKINDS);
        const struct ft_kind *kd = &ft_kinds[g];
        int64_t c = vat_gen_cents(r, kd->lo, kd->hi);
        int sign = kd->sign ? kd->sign : vat_rng_chance(r, 0.5) ? 1 : -1;
        rows[k].kind = g;
        rows[k].cents = sign * c;
    }
    vat_rng_shuffle(r, rows, n, sizeof *rows);
    return rows;
}

static int ft_generate(struct vat_task *t, struct vat_rng *r, struct vat_err *e)
{
    long rmin = vat_task_int(t, "rows_min"), rmax = vat_task_int(t, "rows_max");
    long amin = vat_task_int(t, "accounts_min"), amax = vat_task_int(t, "accounts_max");
    double adj_share = vat_task_real(t, "adjustment_share");
    double neg_share = vat_task_real(t, "negative_share");
    double pos_chance = vat_task_real(t, "positive_adjustment_chance");

    const char *accounts[FT_MAX_ACCOUNTS];
    long want = vat_rng_range(r, amin, amax);
    if (want > FT_MAX_ACCOUNTS)
        want = FT_MAX_ACCOUNTS;
    int nacc = (int)vat_gen_distinct(r, "account", accounts, (size_t)want);
    if (nacc < 2)
        return vat_err_set(e, "%s: the 'account' word list has fewer than 2 entries", t->id);
    const char *asked = accounts[0];

    long nl = vat_rng_range(r, rmin, rmax);
    size_t n = nl < 6 ? 6 : (size_t)nl;
    struct ft_row *rows = ft_draw_rows(r, n, nacc, adj_share, neg_share, pos_chance);

    int32_t start = vat_date_from_civil(2022, 1, 1) + (int32_t)vat_rng_range(r, 0, 1000);
    int32_t span = (int32_t)vat_rng_range(r, 20, 90);
    int32_t *days = vat_gen_days_sorted(r, n, start, start + span);

    struct vat_csv c = VAT_CSV_INIT;
    vat_csv_add_row(&c, ft_cols, FT_NCOLS);
    long id = (long)vat_rng_range(r, 100000, 700000);
    long *ids = vat_xcalloc(n, sizeof *ids);
    struct ft_priv *pv = vat_xcalloc(1, sizeof *pv);
    memcpy(pv->accounts, accounts, sizeof accounts);
    pv->nacc = nacc;
    bool seen[FT_NKINDS] = {false};
    int asked_adjustments = 0;
    char money[32], date[11];
    for (size_t i = 0; i < n; i++) {
        const struct ft_kind *kd = &ft_kinds[rows[i].kind];
        id += (long)vat_rng_range(r, 1, 5);
        ids[i] = id = vat_side_next_id(t->side, "LE-", 7, id);
        vat_csv_row_begin(&c);
        vat_csv_addf(&c, "LE-%07ld", id);
        vat_csv_add(&c, vat_fmt_date(days[i], date));
        vat_csv_add(&c, accounts[rows[i].account]);
        vat_csv_add(&c, kd->name);
        vat_csv_add(&c, vat_fmt_cents(rows[i].cents, money, sizeof money));
        const char *memo = kd->memo[vat_rng_below(r, 3)];
        /* A correction names an earlier entry of the export. */
        if (rows[i].kind == K_ADJUSTMENT && memo == kd->memo[0] && i > 0)
            vat_csv_addf(&c, "%s LE-%07ld", memo, ids[vat_rng_below(r, (uint32_t)i)]);
        else if (rows[i].kind == K_TRANSFER)
            vat_csv_addf(&c, "%s %s %s", memo, rows[i].cents < 0 ? "to" : "from",
                         accounts[(rows[i].account + 1) % nacc]);
        else
            vat_csv_add(&c, memo);
        seen[rows[i].kind] = true;
        if (rows[i].account == 0 && rows[i].kind == K_ADJUSTMENT) {
            pv->magnitude += rows[i].cents < 0 ? -rows[i].cents : rows[i].cents;
            asked_adjustments++;
        }
    }
    free(ids);
    free(days);
    free(rows);
    t->priv = pv;
    t->priv_free = free;

    /* the params are known before the file is written: the trap modules
     * plant in the asked account's rows */
    t->params = json_pack("{s:s, s:s, s:s}", "account", asked, "kind", ft_adjustment,
                          "measure", "sum of absolute amount");
    if (vat_an_write_csv(t, &c, ".csv", "main", e) < 0) {
        vat_csv_release(&c);
        return -1;
    }

    const char *shown[FT_NKINDS];
    int nshown = 0;
    for (int i = 0; i < FT_NKINDS; i++)
        if (seen[i])
            shown[nshown++] = ft_kinds[i].name;

    struct vat_buf b = VAT_BUF_INIT, kinds = VAT_BUF_INIT;
    vat_an_prompt_words(&kinds, shown, (size_t)nshown);
    bool nat = vat_prompt_natural(t);
    struct vat_buf cols = VAT_BUF_INIT;
    const char *ckv[] = {"kinds", kinds.data, NULL};
    vat_prompt_cols(&cols, t, nat ? ft_cols_natural : ft_cols_explicit,
                    VAT_N_OF(ft_cols_natural), ckv);
    const char *kv[] = {
        "topic", "[[the general ledger|this quarter's postings|our account adjustments]]",
        "what", nat ? "[[the general ledger export|our ledger postings{#pl}|the entries of "
                      "our general ledger{#pl}]]"
                    : "[[a ledger export|the entries of a general ledger{#pl}|a general-ledger "
                      "export]]",
        "unit", "entry", "kinds", kinds.data,
        "cols", cols.data,
        NULL,
    };
    vat_prompt_open(&b, t, kv);
    vat_prompt_data(&b, t, kv);
    vat_buf_release(&cols);
    vat_buf_puts(&b, "\n\n");
    ft_say_question(&b, t, asked);
    vat_buf_puts(&b, "\n\n");
    if (nat) {
        vat_prompt_answer(&b, t, "the total as [[one|a single]] JSON number, like 1234.5");
    } else {
        vat_prompt_answer(&b, t, "the total as a JSON number, written like <total> [[with no "
                                 "quotes, currency sign or thousands separator|without quotes, "
                                 "a currency sign or a thousands separator]]");
        vat_buf_putc(&b, ' ');
        vat_prompt_tolerance(&b, t, FT_REL_TOL, FT_ABS_TOL);
    }
    vat_buf_puts(&b, "\n\n");
    vat_buf_release(&kinds);
    vat_an_prompt_csv(&b, t, 0, &c);
    t->prompt = vat_buf_detach(&b);
    vat_csv_release(&c);

    struct vat_an_spec s = {.shape = "number", .rel_tol = FT_REL_TOL, .abs_tol = FT_ABS_TOL};
    t->spec = vat_an_value_spec(&s);
    return 0;
}

/* Sums the asked account's adjustments over the rows read back from the
 * fixture: their absolute values (gold) or their signed values (the trap).
 * Returns the total as a JSON number, or NULL with e set; a file without
 * any such entry cannot answer the question and is refused. */
static json_t *ft_sum_file(const struct vat_task *t, bool magnitude, struct vat_err *e)
{
    const char *asked = vat_an_param_str(t, "account", e);
    struct vat_csv c = VAT_CSV_INIT;
    if (!asked || vat_an_read_csv(t, 0, ft_cols, FT_NCOLS, &c, e) != 0)
        return NULL;
    int64_t cents = 0;
    long n = 0;
    for (size_t i = 1; i < c.nrows; i++) {
        if (strcmp(vat_csv_get(&c, i, C_ACCOUNT), asked) != 0 ||
            strcmp(vat_csv_get(&c, i, C_KIND), ft_adjustment) != 0)
            continue;
        int64_t v;
        if (vat_an_csv_cents(t, 0, &c, i, C_AMOUNT, &v, e) != 0) {
            vat_csv_release(&c);
            return NULL;
        }
        cents += magnitude && v < 0 ? -v : v;
        n++;
    }
    vat_csv_release(&c);
    if (n == 0) {
        vat_err_set(e, "%s: the fixture has no '%s' entry of account '%s'", t->id,
                    ft_adjustment, asked);
        return NULL;
    }
    return json_real((double)cents / 100.0);
}

static int ft_reference(struct vat_task *t, struct vat_err *e)
{
    return vat_an_gold_from(t, ft_sum_file(t, true, e), NULL, e);
}

/* SQL SUM(ABS(...)) in integer cents over the CSV loaded into SQLite, so
 * the total is exact and must equal gold bit for bit; then the generator's
 * planted magnitude when at hand. */
static int ft_confirm(const struct vat_task *t, struct vat_err *e)
{
    static const char *const types[FT_NCOLS] = {"TEXT", "TEXT", "TEXT", "TEXT", "REAL", "TEXT"};
    const char *asked = vat_an_param_str(t, "account", e);
    if (!asked)
        return -1;
    char *sql = sqlite3_mprintf("SELECT SUM(ABS(CAST(round(amount * 100) AS INTEGER))) / 100.0 "
                                "FROM ledger WHERE account = %Q AND kind = %Q",
                                asked, ft_adjustment);
    if (!sql)
        return vat_err_set(e, "%s: confirm: out of memory", t->id);
    struct vat_an_query q = {.table = "ledger", .types = types, .sql = sql, .kind = VAT_AN_NUMBER};
    int rc = vat_an_confirm_query(t, &q, 0, 0, e);
    sqlite3_free(sql);
    if (rc != 0 || !t->priv)
        return rc;
    const struct ft_priv *pv = t->priv;
    return vat_an_confirm_value(t, json_real((double)pv->magnitude / 100.0),
                                "the generator's planted magnitude", 0, 0, e);
}

static int ft_trap(struct vat_task *t, struct vat_err *e)
{
    return vat_an_trap_from(t, ft_sum_file(t, false, e));
}

/* ---- the program form ------------------------------------------------------ */

static const char *const ft_types[FT_NCOLS] = {"TEXT", "TEXT", "TEXT", "TEXT", "REAL", "TEXT"};
static const char *const ft_tables[] = {"ledger", "ledger_entries", "gl_export", "journal",
                                        "postings"};
static const char *const ft_outs[] = {"magnitude", "total_magnitude", "adjustment_total",
                                      "abs_total", "total"};

static const char *ft_asked(const struct vat_task *t)
{
    const char *a = json_string_value(json_object_get(t->params, "account"));
    return a ? a : "";
}

static char *ft_pf_question(struct vat_task *t)
{
    struct vat_buf b = VAT_BUF_INIT;
    ft_say_question(&b, t, ft_asked(t));
    return vat_buf_detach(&b);
}

static char *ft_pf_shape(struct vat_task *t, const struct vat_pf_names *n)
{
    const char *kv[] = {"out", n->out, NULL};
    if (vat_prompt_natural(t))
        return vat_prompt_text(t, 's',
                               "[[Return|It should return|I'd like]] one row with one column, "
                               "`{out}` (the [[gross |]]total).",
                               kv);
    return vat_prompt_text(t, 's',
                           "[[It must return|The result must be]] exactly one row with one "
                           "column, `{out}` (the total, a number).",
                           kv);
}

static char *ft_pf_query(const struct vat_task *t, const struct vat_pf_names *n, bool abs_value)
{
    struct vat_buf b = VAT_BUF_INIT;
    vat_buf_printf(&b, "SELECT SUM(%s) AS %s\nFROM %s\nWHERE account = ",
                   abs_value ? "ABS(amount)" : "amount", n->out, n->table);
    vat_sqlgen_put_literal(&b, ft_asked(t));
    vat_buf_printf(&b, " AND kind = '%s'", ft_adjustment);
    return vat_buf_detach(&b);
}

static char *ft_pf_gold(const struct vat_task *t, const struct vat_pf_names *n)
{
    return ft_pf_query(t, n, true);
}

/* The named mistake: the signed amounts summed, abs() forgotten. */
static char *ft_pf_trap(const struct vat_task *t, const struct vat_pf_names *n)
{
    return ft_pf_query(t, n, false);
}

/* Variant k: the task's accounts with new entries.  The asked account
 * has negative and positive adjustments of different sizes (the trap
 * cancels them; a minimum, maximum, mean or count is not the total), a
 * fee and an accrual (a filter without the kind, or with <= for =, takes
 * them); the accounts next to it in byte order have adjustments (a filter
 * without the account, or with <= or >=, takes them); the other accounts
 * have no adjustment at all (no qualifying row); memo cells are sometimes
 * blank; variant 1 has an
 * adjustment of -0.01, variant 2 one of 0.00 and one of -400.00 (boundary
 * values). */
static int ft_pf_variant(const struct vat_task *t, struct vat_rng *r, int k, struct vat_csv *c,
                         struct vat_err *e)
{
    const struct ft_priv *pv = t->priv;
    if (!pv || pv->nacc < 2)
        return vat_err_set(e, "%s: variants need the generator's accounts", t->id);
    /* Accounts sorting before and after the asked one (a filter written
     * as <= or >= takes their adjustments), from the account word list. */
    const char *asked = pv->accounts[0], *lo = NULL, *hi = NULL;
    size_t nw = 0;
    const char *const *words = vat_words("account", &nw);
    for (size_t i = 0; words && i < nw; i++) {
        int cmp = strcmp(words[i], asked);
        if (cmp < 0 && (!lo || strcmp(words[i], lo) > 0))
            lo = words[i];
        if (cmp > 0 && (!hi || strcmp(words[i], hi) < 0))
            hi = words[i];
    }
    const char *other[2] = {lo ? lo : pv->accounts[1], hi ? hi : pv->accounts[1]};
    vat_csv_add_row(c, ft_cols, FT_NCOLS);
    long id = (long)vat_rng_range(r, 100000, 700000);
    int32_t day = vat_date_from_civil(2022, 1, 1) + (int32_t)vat_rng_range(r, 0, 1000);
    size_t n = (size_t)vat_rng_range(r, 16, 32);
    char money[32], date[11];
    for (size_t i = 0; i < n; i++) {
        const char *acc, *kname;
        int kind;
        int64_t cents;
        if (i < 5) {
            /* three of the asked account, one each of the neighbours */
            acc = i < 3 ? asked : other[i - 3];
            kind = K_ADJUSTMENT;
            cents = ft_adjust_cents(r, i != 1);
            if (i == 0 && k == 1)
                cents = -1;
            if (i == 0 && k == 2)
                cents = -40000;
            if (i == 2 && k == 2)
                cents = 0;
            kname = ft_kinds[kind].name;
        } else if (i < 7) {
            /* a fee, and an accrual (a kind sorting before 'adjustment') */
            acc = asked;
            kind = K_FEE;
            cents = -vat_gen_cents(r, ft_kinds[K_FEE].lo, ft_kinds[K_FEE].hi);
            kname = i == 5 ? ft_kinds[K_FEE].name : "accrual";
        } else {
            acc = pv->accounts[vat_rng_below(r, (uint32_t)pv->nacc)];
            kind = (int)vat_rng_below(r, K_ADJUSTMENT); /* never an adjustment */
            const struct ft_kind *kd = &ft_kinds[kind];
            int64_t cc = vat_gen_cents(r, kd->lo, kd->hi);
            int sign = kd->sign ? kd->sign : vat_rng_chance(r, 0.5) ? 1 : -1;
            cents = sign * cc;
            kname = kd->name;
        }
        id += (long)vat_rng_range(r, 1, 5);
        id = vat_side_next_id(t->side, "LE-", 7, id);
        day += (int32_t)vat_rng_below(r, 2);
        bool blank_memo = vat_rng_chance(r, 0.25);
        const char *memo = ft_kinds[kind].memo[vat_rng_below(r, 3)];
        vat_csv_row_begin(c);
        vat_csv_addf(c, "LE-%07ld", id);
        vat_csv_add(c, vat_fmt_date(day, date));
        vat_csv_add(c, acc);
        vat_csv_add(c, kname);
        vat_csv_add(c, vat_fmt_cents(cents, money, sizeof money));
        vat_csv_add(c, blank_memo ? "" : memo);
    }
    return 0;
}

static const struct vat_progform ft_progform = {
    .tables = ft_tables,
    .ntables = sizeof ft_tables / sizeof *ft_tables,
    .outs = ft_outs,
    .nouts = sizeof ft_outs / sizeof *ft_outs,
    .columns = ft_cols,
    .types = ft_types,
    .ncols = FT_NCOLS,
    .ordered = true,
    .kind = VAT_AN_NUMBER,
    .rel_tol = FT_REL_TOL,
    .abs_tol = FT_ABS_TOL,
    .nvariants = 3,
    .question = ft_pf_question,
    .shape = ft_pf_shape,
    .gold_sql = ft_pf_gold,
    .trap_sql = ft_pf_trap,
    .variant = ft_pf_variant,
};

/* The asked account's rows (the status rows among them are its
 * adjustments): a module's plant elsewhere moves no total. */
static void ft_targets(const struct vat_task *t, const struct vat_csv *c, unsigned m, bool *is)
{
    (void)m;
    const char *asked = json_string_value(json_object_get(t->params, "account"));
    int col = vat_csv_col(c, 0, "account");
    for (size_t i = 1; i < c->nrows && col >= 0 && asked; i++)
        is[i] = strcmp(vat_csv_get(c, i, (size_t)col), asked) == 0;
}

/* Entry ids are unique, kinds lower case, amounts signed decimals. */
static const struct vat_trapmods ft_modules = {
    .duplicates = true,
    .status = "kind",
    .amount = "amount",
    .status_value = "adjustment",
    .id = "entry_id",
    .lookalike = "amount_with_tax",
    .lookalike_is = "the amount with sales tax added",
    .late = true,
    .targets = ft_targets};

const struct vat_template vat_tmpl_filtered_total = {
    .version = VAT_TEMPLATE_V1,
    .name = "filtered_total",
    .family = "analytics",
    .answer_kind = "value",
    .trap = "Summing the signed amounts without abs(), so negative adjustments cancel positive "
            "ones instead of adding their size.",
    .summary = "Sum of the absolute amounts of one account's adjustment entries.",
    .params = ft_params,
    .default_count = 12,
    .generate = ft_generate,
    .reference = ft_reference,
    .confirm = ft_confirm,
    .trap_answer = ft_trap,
    .check = vat_check_task,
    .giveaways = ft_giveaways,
    .answer_columns = ft_answer_columns,
    .progform = &ft_progform,
    .conventions = ft_conventions,
    .defects = ft_defects,
    .modules = &ft_modules,
};
