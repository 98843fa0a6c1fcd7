/* dedupe_aggregate.c — the dedupe_aggregate analytics template: a webhook
 * delivery log (delivery_id, received_at, event_id, user, source, amount)
 * in which the sender retries events it thinks were lost, so an event can
 * appear two or three times with the same event_id and payload and a later
 * received_at; the question is the total amount per user with each
 * event_id counted once.  The trap sums every delivery: every fixture holds
 * at least one retried event, so some user's trap total is too high.
 * In the program form gold sums amount per user over SELECT
 * DISTINCT event_id, user, amount and the trap over every row, both run on
 * three variant CSVs with retries, same-amount events and blank amounts.
 * Exports vat_tmpl_dedupe_aggregate. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analytics.h"
#include "csvio.h"
#include "progform.h"
#include "trapmod.h"
#include "prompt.h"
#include "template.h"
#include "values.h"

#define DA_MAX_USERS 20
#define DA_MAX_COPIES 3 /* an event and at most two retries */
#define DA_REL_TOL 1e-9
#define DA_ABS_TOL 1e-6

enum { C_DELIVERY, C_RECEIVED, C_EVENT, C_USER, C_SOURCE, C_AMOUNT, DA_NCOLS };
static const char *const da_cols[DA_NCOLS] = {"delivery_id", "received_at", "event_id",
                                              "user",        "source",      "amount"};
static const char *const da_sources[] = {"ios", "android", "web"};
/* App-store price points; the rest of the amounts are free top-ups. */
static const int64_t da_prices[] = {99, 199, 299, 499, 999, 1499, 1999, 4999, 9999};

/* The question in both styles.  Natural: the log's rows are deliveries and
 * `event_id` names the purchase (facts about the data); "how much did each
 * user spend" counts purchases, one per `event_id` (the convention, stated;
 * never the retries). */
static const char *const da_q_natural[] = {
    "How much did each user spend?",
    "What is each `user`'s total purchase amount?",
    "Could you work out how much money each user paid us?",
    "Per user, what did they spend in total?",
    "I need [[every|each]] user's total spend.",
    "[[For the revenue report|For our payout check|For finance]], how much has each user "
    "spent?",
};
static const char *const da_c_natural[] = {
    "{^once}.",
    "[[Remember that|Note that]] {once}.",
    "[[Purchases are what we count|We count purchases]]: {once}.",
    "[[We count purchases, so|Purchases are what count:]] {once}.",
};
/* The explicit question, ways of asking it; the rules that follow it are
 * the same. */
static const char *const da_q_explicit[] = {
    "[[Question: what|What]] is the total `amount` per `user`, counting each event (each "
    "distinct `event_id`) exactly once, however many times it was delivered?",
    "For each `user`, what do their events add up to in `amount`, each event (each "
    "distinct `event_id`) counted exactly once however many times it was delivered?",
    "Sum `amount` by `user` with every event (every distinct `event_id`) taken exactly "
    "once, however often it was delivered: what is each user's total?",
    "Compute the total `amount` of every `user`, counting each distinct `event_id` exactly "
    "once whatever the number of its deliveries.",
    "Give each `user`'s total `amount`, each event (each distinct `event_id`) counted "
    "exactly once, however many times it was delivered.",
};
static const char *const da_r_explicit[] = {
    "[[Every user in the file appears in the answer|Each user in the file appears in the "
    "answer|The answer lists every user in the file]]; [[sum the amounts exactly|sum "
    "exactly|add up exactly]]: [[each total is a number with at most two decimals|a total has "
    "at most two decimals|every total carries two decimals at most]].",
};
/* The columns as the data description lists them, in each style. */
static const struct vat_prompt_col da_cols_natural[] = {
    {"delivery_id", ""},
    {"received_at", "[[when the delivery arrived|arrival time|when we got it]], YYYY-MM-DD "
     "HH:MM:SS"},
    {"event_id", "[[the purchase event it reports|which purchase it is about|the purchase it "
        "reports]]"},
    {"user", "[[the account that paid|who paid|the paying account]]"},
    {"source", "`ios`, `android` or `web`"},
    {"amount", "[[two decimals|with two decimals|the price, two decimals]]"},
};
static const struct vat_prompt_col da_cols_explicit[] = {
    {"delivery_id", "[[unique to each delivery|one per delivery]]"},
    {"received_at", "[[when the delivery arrived|the arrival time of the delivery]], YYYY-MM-DD "
        "HH:MM:SS"},
    {"event_id", "[[the purchase event being reported|the purchase event it reports]]"},
    {"user", "[[the account that paid|the paying account]]"},
    {"source", "`ios`, `android` or `web`"},
    {"amount", "[[the purchase amount, a decimal with two places|the amount of the purchase, "
        "two decimal places]]"},
};
/* What the explicit description adds after the columns. */
static const char da_cols_note[] =
    "[[When the sender gets no acknowledgement it delivers the same event again: a "
    "retried event repeats|A sender that gets no acknowledgement delivers the same "
    "event again, so a retried event repeats|Without an acknowledgement the sender "
    "delivers the same event again; a retried event repeats]] with the same "
    "`event_id`, `user`, `source` and `amount`, but with a new `delivery_id` and a "
    "later `received_at`. An event may be delivered more than twice";
static const char *const da_giveaways[] = {
    "exactly once", "each distinct", "however many times", "delivers the same event again",
    "retried", "retry", "duplicate", "tolerance", "Sum the amounts exactly", NULL,
};
/* The repeated deliveries, which a natural prompt never describes. */
static const char *const da_defects[] = {
    "delivered again", "more than once", "twice", "repeat", "resen", "re-sen", "redeliver",
    "same event again", "acknowledge", NULL,
};
static const char *const da_answer_columns[] = {"event_id", "user", "amount", NULL};
static const char *const da_states_once[] = {
    "each purchase counts once", "every purchase is counted once",
    "one purchase per `event_id`", "each `event_id` is one purchase", NULL,
};
static const struct vat_convention da_conventions[] = {
    {"count_once_per", da_states_once},
    {NULL, NULL},
};

/* The question and what decides it, in the task's style (both answer
 * forms). */
static void da_say_question(struct vat_buf *b, struct vat_task *t)
{
    if (vat_prompt_natural(t)) {
        VAT_PROMPT_PUT(b, t, 'q', da_q_natural, NULL);
        vat_buf_putc(b, ' ');
        const char *kv[] = {"once", vat_prompt_state(t, "count_once_per"), NULL};
        VAT_PROMPT_PUT(b, t, 'c', da_c_natural, kv);
    } else {
        VAT_PROMPT_PUT(b, t, 'q', da_q_explicit, NULL);
        vat_buf_putc(b, ' ');
        VAT_PROMPT_PUT(b, t, 'r', da_r_explicit, NULL);
    }
}

static const struct vat_param da_params[] = {
    {.name = "rows_min", .type = VAT_PARAM_INT, .def = 20, .min = 5, .max = 2000,
     .doc = "fewest deliveries (data rows) in a fixture", .role = VAT_PARAM_ROWS},
    {.name = "rows_max", .type = VAT_PARAM_INT, .def = 120, .min = 5, .max = 2000,
     .doc = "most deliveries (data rows) in a fixture", .role = VAT_PARAM_ROWS},
    {.name = "users_min", .type = VAT_PARAM_INT, .def = 3, .min = 1, .max = DA_MAX_USERS,
     .doc = "fewest distinct users"},
    {.name = "users_max", .type = VAT_PARAM_INT, .def = 8, .min = 1, .max = DA_MAX_USERS,
     .doc = "most distinct users"},
    {.name = "retry_rate", .type = VAT_PARAM_REAL, .def = 0.15, .min = 0, .max = 0.5,
     .doc = "retried deliveries as a share of all rows (at least one is always planted)"},
    {.name = "second_retry_chance", .type = VAT_PARAM_REAL, .def = 0.35, .min = 0, .max = 1,
     .doc = "chance that one event is delivered three times"},
    {.name = "amount_max", .type = VAT_PARAM_INT, .def = 250, .min = 10, .max = 100000,
     .doc = "largest top-up amount, in whole currency units"},
    VAT_PROGFORM_PARAM,
    {0},
};

/* What the generator planted, for confirm's cross-check. */
struct da_priv {
    struct vat_an_tally unique; /* user -> cents over distinct events */
};

static void da_priv_free(void *p)
{
    struct da_priv *g = p;
    vat_an_tally_release(&g->unique);
    free(g);
}

/* ---- generation ---------------------------------------------------------- */

/* A login handle from a person's name, in the styles sign-up forms end up
 * with: "maria.lopez", "mlopez", "maria_lopez", "marial84".  A vat_gen_fn
 * (arg unused). */
static char *da_handle(struct vat_rng *r, const void *arg, char *out, size_t cap)
{
    (void)arg;
    char person[64], low[64];
    vat_norm_label(vat_gen_person(r, person, sizeof person), low, sizeof low);
    const char *sp = strchr(low, ' ');
    int fl = sp ? (int)(sp - low) : (int)strlen(low);
    const char *last = sp ? sp + 1 : "";
    switch (vat_rng_below(r, 4)) {
    case 0: snprintf(out, cap, "%.*s.%s", fl, low, last); break;
    case 1: snprintf(out, cap, "%c%s", low[0], last); break;
    case 2: snprintf(out, cap, "%.*s_%s", fl, low, last); break;
    default: snprintf(out, cap, "%.*s%c%02u", fl, low, last[0], vat_rng_below(r, 100)); break;
    }
    return out;
}

/* An event id as payment providers write them: "evt_" and 14 base-36 digits. */
static void da_event_id(struct vat_rng *r, char out[24])
{
    static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
    memcpy(out, "evt_", 4);
    for (int i = 0; i < 14; i++)
        out[4 + i] = digits[vat_rng_below(r, 36)];
    out[18] = 0;
}

struct da_event {
    char id[24];
    int user;
    int source;
    int64_t cents;
    int64_t sent;  /* seconds since the epoch */
    int copies;    /* deliveries of this event */
};

struct da_delivery {
    int event;
    int64_t at;
    size_t seq; /* draw order, to keep the sort stable */
};

static int da_delivery_cmp(const void *a, const void *b)
{
    const struct da_delivery *x = a, *y = b;
    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Marks the retried events (distinct ones first; with triple, one event
 * twice) and returns every delivery, in the order received (*ndel_out of
 * them, a new array). */
static struct da_delivery *da_deliveries(struct vat_rng *r, struct da_event *ev, long nevents,
                                         long nretry, bool triple, size_t *ndel_out)
{
    /* Retries: distinct events first; with `triple`, one event twice. */
    long *order = vat_xcalloc((size_t)nevents, sizeof *order);
    for (long i = 0; i < nevents; i++)
        order[i] = i;
    vat_rng_shuffle(r, order, (size_t)nevents, sizeof *order);
    long placed = 0;
    if (triple) {
        ev[order[0]].copies = 3;
        placed = 2;
    }
    for (long i = triple ? 1 : 0; placed < nretry && i < nevents; i++, placed++)
        ev[order[i]].copies = 2;
    free(order);

    size_t ndel = 0;
    for (long i = 0; i < nevents; i++)
        ndel += (size_t)ev[i].copies;
    *ndel_out = ndel;
    struct da_delivery *del = vat_xcalloc(ndel, sizeof *del);
    size_t k = 0;
    for (long i = 0; i < nevents; i++) {
        int64_t at = ev[i].sent + vat_rng_range(r, 0, 2);
        for (int c = 0; c < ev[i].copies; c++, k++) {
            /* Back-off doubles: a retry comes minutes after the last try. */
            if (c > 0)
                at += vat_rng_range(r, 30, 600) << (c - 1);
            del[k].event = (int)i;
            del[k].at = at;
            del[k].seq = k;
        }
    }
    qsort(del, ndel, sizeof *del, da_delivery_cmp);
    return del;
}

static int da_generate(struct vat_task *t, struct vat_rng *r, struct vat_err *e)
{
    long rmin = vat_task_int(t, "rows_min"), rmax = vat_task_int(t, "rows_max");
    long umin = vat_task_int(t, "users_min"), umax = vat_task_int(t, "users_max");
    double retry_rate = vat_task_real(t, "retry_rate");
    double second = vat_task_real(t, "second_retry_chance");
    int64_t max_cents = (int64_t)vat_task_int(t, "amount_max") * 100;
    if (rmax < rmin)
        rmax = rmin;
    if (umax < umin)
        umax = umin;

    int nusers = (int)vat_rng_range(r, umin, umax);
    char (*user)[64] = vat_xcalloc((size_t)nusers, sizeof *user);
    if (vat_gen_unique(r, da_handle, NULL, user[0], (size_t)nusers, sizeof user[0]) <
        (size_t)nusers) {
        free(user);
        return vat_err_set(e, "%s: cannot draw %d distinct user handles", t->id, nusers);
    }

    /* Rows = events + retries; every user has an event, one retry at least. */
    long nrows = vat_rng_range(r, rmin, rmax);
    long nretry = (long)(retry_rate * (double)nrows + 0.5);
    if (nretry < 1)
        nretry = 1;
    long nevents = nrows - nretry;
    if (nevents < nusers)
        nevents = nusers;
    bool triple = vat_rng_chance(r, second);
    /* Retries go to distinct events (a second retry aside), so there must
     * be enough events to hold them. */
    if (nretry > nevents + (triple ? 1 : 0))
        nretry = nevents + (triple ? 1 : 0);
    if (triple && nretry < 2)
        nretry = 2;

    struct da_event *ev = vat_xcalloc((size_t)nevents, sizeof *ev);
    uint32_t weight[DA_MAX_USERS];
    for (int i = 0; i < nusers; i++)
        weight[i] = (uint32_t)vat_rng_range(r, 1, 5);
    int64_t start = (int64_t)(vat_date_from_civil(2023, 1, 1) + vat_rng_range(r, 0, 700)) * 86400;
    int64_t span = vat_rng_range(r, 1, 5) * 86400;
    for (long i = 0; i < nevents; i++) {
        bool dup;
        do {
            da_event_id(r, ev[i].id);
            dup = false;
            for (long j = 0; j < i; j++)
                dup = dup || strcmp(ev[i].id, ev[j].id) == 0;
        } while (dup);
        ev[i].user = i < nusers ? (int)i : (int)vat_rng_weighted(r, weight, (size_t)nusers);
        ev[i].source = (int)vat_rng_below(r, 3);
        if (vat_rng_chance(r, 0.6) || max_cents < 500)
            ev[i].cents = da_prices[vat_rng_below(r, sizeof da_prices / sizeof da_prices[0])];
        else
            ev[i].cents = vat_gen_cents(r, 500, max_cents);
        ev[i].sent = start + vat_rng_range(r, 0, span);
        ev[i].copies = 1;
    }

    size_t ndel;
    struct da_delivery *del = da_deliveries(r, ev, nevents, nretry, triple, &ndel);

    struct vat_csv c = VAT_CSV_INIT;
    vat_csv_add_row(&c, da_cols, DA_NCOLS);
    long id = (long)vat_rng_range(r, 1000000, 8000000);
    struct da_priv *pv = vat_xcalloc(1, sizeof *pv);
    char money[32], stamp[20];
    for (size_t i = 0; i < ndel; i++) {
        const struct da_event *x = &ev[del[i].event];
        id += (long)vat_rng_range(r, 1, 40);
        id = vat_side_next_id(t->side, "dlv_", 8, id);
        vat_csv_row_begin(&c);
        vat_csv_addf(&c, "dlv_%08ld", id);
        vat_csv_add(&c, vat_fmt_timestamp(del[i].at, stamp));
        vat_csv_add(&c, x->id);
        vat_csv_add(&c, user[x->user]);
        vat_csv_add(&c, da_sources[x->source]);
        vat_csv_add(&c, vat_fmt_cents(x->cents, money, sizeof money));
    }
    for (long i = 0; i < nevents; i++)
        vat_an_tally_add(&pv->unique, user[ev[i].user], ev[i].cents);
    free(del);
    free(ev);
    free(user);
    t->priv = pv;
    t->priv_free = da_priv_free;

    if (vat_an_write_csv(t, &c, ".csv", "main", e) < 0) {
        vat_csv_release(&c);
        return -1;
    }

    struct vat_buf b = VAT_BUF_INIT;
    bool nat = vat_prompt_natural(t);
    struct vat_buf cols = VAT_BUF_INIT;
    vat_prompt_cols(&cols, t, nat ? da_cols_natural : da_cols_explicit,
                    VAT_N_OF(da_cols_natural), NULL);
    if (!nat) {
        vat_buf_puts(&cols, ". ");
        vat_prompt_say(&cols, t, 'k', da_cols_note, NULL);
    }
    const char *kv[] = {
        "topic", "[[our in-app purchases|the app's payment events|user spending in our app]]",
        "what", nat ? "[[our app's payments webhook delivery log|the deliveries our payments "
                      "webhook received{#pl}|the webhook log of our app's payments]]"
                    : "[[the delivery log of a payments webhook for an app|an app's payments "
                      "webhook log|the deliveries of an app's payments webhook{#pl}]]",
        "unit", nat ? "delivery received" : "delivery",
        "cols", cols.data,
        NULL,
    };
    vat_prompt_open(&b, t, kv);
    vat_prompt_data(&b, t, kv);
    vat_buf_release(&cols);
    vat_buf_puts(&b, "\n\n");
    da_say_question(&b, t);
    vat_buf_puts(&b, "\n\n");
    if (nat) {
        vat_prompt_answer(&b, t, "[[a JSON object from every `user` in the log to their total "
                                 "as a number|a JSON object mapping each `user` of the log to "
                                 "what they spent, a number]], [[like|for example|e.g.]] "
                                 "{\"<user>\": <total>}");
    } else {
        vat_prompt_answer(&b, t, "[[an object whose keys are the users spelled exactly as in "
                                 "the `user` column and whose values are the totals as JSON "
                                 "numbers|an object mapping each user, spelled exactly as in the "
                                 "`user` column, to their total as a JSON number]], [[for "
                                 "example|like]] {\"<user>\": <total>, \"<other user>\": "
                                 "<total>}. [[Key order does not matter|The order of the keys "
                                 "does not matter|Keys may come in any order]]");
        vat_buf_putc(&b, ' ');
        vat_prompt_tolerance(&b, t, DA_REL_TOL, DA_ABS_TOL);
    }
    vat_buf_puts(&b, "\n\n");
    vat_an_prompt_csv(&b, t, 0, &c);
    t->prompt = vat_buf_detach(&b);
    vat_csv_release(&c);

    t->params = json_pack("{s:s, s:s, s:s, s:s}", "group_by", "user", "sum_of", "amount",
                          "count_once_per", "event_id", "retries",
                          "same event_id and payload, later received_at");


    struct vat_an_spec s = {.shape = "object", .rel_tol = DA_REL_TOL, .abs_tol = DA_ABS_TOL};
    t->spec = vat_an_value_spec(&s);
    return 0;
}

/* ---- gold, confirm, trap ------------------------------------------------- */

/* Sums amount per user over the rows read back from the fixture: with
 * dedupe each event_id once (gold), else every delivery (the trap).  A
 * repeated event_id whose user, source or amount differs is not a retry,
 * so the file is refused rather than guessed at. */
static json_t *da_sum_file(const struct vat_task *t, bool dedupe, struct vat_err *e)
{
    struct vat_csv c = VAT_CSV_INIT;
    if (vat_an_read_csv(t, 0, da_cols, DA_NCOLS, &c, e) != 0)
        return NULL;
    struct vat_an_tally sums = VAT_AN_TALLY_INIT, seen = VAT_AN_TALLY_INIT;
    json_t *out = NULL;
    for (size_t i = 1; i < c.nrows; i++) {
        int64_t cents;
        const char *ev = vat_csv_get(&c, i, C_EVENT);
        if (vat_an_csv_cents(t, 0, &c, i, C_AMOUNT, &cents, e) != 0)
            goto done;
        if (!*ev || !*vat_csv_get(&c, i, C_USER)) {
            vat_err_set(e, "%s: '%s' record %zu: blank event_id or user", t->id,
                        t->fixture[0].path, i + 1);
            goto done;
        }
        const struct vat_an_entry *first = vat_an_tally_find(&seen, ev);
        if (first) {
            /* seen's sum holds the record of the first delivery */
            size_t f = (size_t)first->sum;
            for (int col = C_USER; col <= C_AMOUNT; col++) {
                if (strcmp(vat_csv_get(&c, i, (size_t)col), vat_csv_get(&c, f, (size_t)col))) {
                    vat_err_set(e,
                                "%s: '%s' record %zu: event '%s' repeats record %zu with a "
                                "different %s",
                                t->id, t->fixture[0].path, i + 1, ev, f + 1, da_cols[col]);
                    goto done;
                }
            }
            if (dedupe)
                continue;
        } else {
            vat_an_tally_get(&seen, ev)->sum = (int64_t)i;
        }
        vat_an_tally_add(&sums, vat_csv_get(&c, i, C_USER), cents);
    }
    out = vat_an_tally_cents_json(&sums);
done:
    vat_an_tally_release(&seen);
    vat_an_tally_release(&sums);
    vat_csv_release(&c);
    return out;
}

static int da_reference(struct vat_task *t, struct vat_err *e)
{
    return vat_an_gold_from(t, da_sum_file(t, true, e), "the fixture has no event", e);
}

/* SQL over the CSV loaded into SQLite: SELECT DISTINCT over the event's
 * identity and payload, then integer-cent sums per user, which must equal
 * gold bit for bit; then the generator's planted per-user totals. */
static int da_confirm(const struct vat_task *t, struct vat_err *e)
{
    static const char *const types[DA_NCOLS] = {"TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "REAL"};
    static const struct vat_an_query q = {
        .table = "events", .types = types, .kind = VAT_AN_OBJECT,
        .sql = "SELECT \"user\", SUM(cents) / 100.0 FROM "
               "(SELECT DISTINCT event_id, \"user\", CAST(round(amount * 100) AS INTEGER) AS "
               "cents FROM events) GROUP BY \"user\" ORDER BY \"user\""};
    int rc = vat_an_confirm_query(t, &q, 0, 0, e);
    if (rc != 0 || !t->priv)
        return rc;
    struct da_priv *pv = t->priv;
    return vat_an_confirm_value(t, vat_an_tally_cents_json(&pv->unique),
                                "the generator's planted totals", 0, 0, e);
}

static int da_trap(struct vat_task *t, struct vat_err *e)
{
    return vat_an_trap_from(t, da_sum_file(t, false, e));
}

/* ---- the program form ------------------------------------------------------ */

static const char *const da_types[DA_NCOLS] = {"TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "REAL"};
static const char *const da_tables[] = {"deliveries", "webhook_log", "webhook_deliveries",
                                        "payment_events", "delivery_log"};
static const char *const da_outs[] = {"total", "total_amount", "spent", "user_total",
                                      "amount_total"};

static char *da_pf_question(struct vat_task *t)
{
    struct vat_buf b = VAT_BUF_INIT;
    da_say_question(&b, t);
    return vat_buf_detach(&b);
}

static char *da_pf_shape(struct vat_task *t, const struct vat_pf_names *n)
{
    const char *kv[] = {"out", n->out, "dir", n->descending ? "descending" : "ascending", NULL};
    if (vat_prompt_natural(t))
        return vat_prompt_text(
            t, 's',
            "[[Return|It should return|I'd like]] two columns, `user` (as stored) and `{out}` "
            "([[their total|what they spent]]), one row per user in the table, "
            "[[ordered|sorted]] by `user` {dir}; a purchase [[without an amount|with no "
            "amount]] adds nothing, so a user with only such purchases shows 0.",
            kv);
    return vat_prompt_text(
        t, 's',
        "[[It must return|The result must have|Return]] exactly two columns, `user` (as stored) "
        "and `{out}` (the user's total, a number), one row per distinct `user` in the table and "
        "no other rows, [[ordered|sorted]] by `user` {dir} (SQLite's default text order). A "
        "blank `amount` adds nothing: a user whose events all have a blank `amount` has the "
        "total 0.",
        kv);
}

/* Gold keeps one row per event (its identity and amount) before summing;
 * the trap sums every delivery. */
static char *da_pf_query(const struct vat_pf_names *n, bool dedupe)
{
    return vat_xasprintf("SELECT user, COALESCE(SUM(amount), 0) AS %s\nFROM %s%s%s\n"
                         "GROUP BY user\nORDER BY user%s",
                         n->out, dedupe ? "(SELECT DISTINCT event_id, user, amount FROM " : "",
                         n->table, dedupe ? ")" : "", n->descending ? " DESC" : "");
}

static char *da_pf_gold(const struct vat_task *t, const struct vat_pf_names *n)
{
    (void)t;
    return da_pf_query(n, true);
}

/* The named mistake: every delivery row summed, retried events counted
 * once per delivery. */
static char *da_pf_trap(const struct vat_task *t, const struct vat_pf_names *n)
{
    (void)t;
    return da_pf_query(n, false);
}

static int da_strcmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* An event of a variant: its user (a role), deliveries and cents (-1:
 * drawn at random). */
struct da_plan {
    int user, copies;
    int64_t cents;
};

#define DA_PF_USERS 6
#define DA_PF_EVENTS 40

/* Variant k: up to six of the task's users (fresh handles when it has
 * fewer than four) with new events, each in a role.  The first has an
 * event delivered three times and another event of the same amount
 * delivered once (the trap counts the retries; a sum of the distinct
 * amounts, or a dedupe on user and amount, loses the second event; a
 * count, mean, minimum or maximum is not the total).  The second holds
 * the boundary value: an event of 0.00 delivered twice (variant 1; a
 * filter on amount > 0 drops the user), one of 0.01 (variant 2), one of
 * the largest amount retried (variant 3).  The third has only events with
 * a blank amount, one retried (a user with no amount to sum: total 0,
 * not NULL, and still listed).  The fourth's events have a blank source.
 * The others get one to three events, some retried. */
static int da_pf_variant(const struct vat_task *t, struct vat_rng *r, int k, struct vat_csv *c,
                         struct vat_err *e)
{
    const struct da_priv *pv = t->priv;
    if (!pv || pv->unique.n < 1)
        return vat_err_set(e, "%s: variants need the generator's users", t->id);
    /* The task's users in byte order, so the choice does not depend on
     * whether the tally was sorted yet. */
    size_t nmain = pv->unique.n;
    const char **sorted = vat_xcalloc(nmain, sizeof *sorted);
    for (size_t i = 0; i < nmain; i++)
        sorted[i] = pv->unique.e[i].key;
    qsort(sorted, nmain, sizeof *sorted, da_strcmp);
    char user[DA_PF_USERS][64];
    int nu = 0;
    for (; nu < DA_PF_USERS && (size_t)nu < nmain; nu++)
        snprintf(user[nu], sizeof user[nu], "%s", sorted[nu]);
    free(sorted);
    while (nu < 4) {
        char h[64];
        da_handle(r, NULL, h, sizeof h);
        bool dup = false;
        for (int i = 0; i < nu; i++)
            dup = dup || strcmp(user[i], h) == 0;
        if (!dup)
            snprintf(user[nu++], sizeof user[0], "%s", h);
    }
    vat_rng_shuffle(r, user, (size_t)nu, sizeof user[0]);

    int64_t max_cents = (int64_t)vat_task_int(t, "amount_max") * 100;
    struct da_event ev[DA_PF_EVENTS];
    bool blank_amount[DA_PF_EVENTS] = {false}, blank_source[DA_PF_EVENTS] = {false};
    int ne = 0;
    int64_t same = da_prices[vat_rng_below(r, sizeof da_prices / sizeof da_prices[0])];
    struct da_plan plan[DA_PF_EVENTS];
    plan[ne++] = (struct da_plan){0, 3, same};
    plan[ne++] = (struct da_plan){0, 1, same};
    if (k == 1)
        plan[ne++] = (struct da_plan){1, 2, 0};
    else if (k == 2) {
        plan[ne++] = (struct da_plan){1, 1, 1};
        plan[ne++] = (struct da_plan){1, 2, -1};
    } else
        plan[ne++] = (struct da_plan){1, 2, max_cents};
    int first_blank = ne;
    plan[ne++] = (struct da_plan){2, 2, -1};
    plan[ne++] = (struct da_plan){2, 1, -1};
    int first_nosource = ne;
    plan[ne++] = (struct da_plan){3, 2, -1};
    plan[ne++] = (struct da_plan){3, 1, -1};
    int end_roles = ne;
    for (int u = 4; u < nu; u++) {
        int m = (int)vat_rng_range(r, 1, 3);
        for (int j = 0; j < m; j++)
            plan[ne++] = (struct da_plan){u, 1, -1};
    }
    /* a few more events for anyone but the blank-amount user */
    int more = (int)vat_rng_range(r, 2, 6);
    for (int j = 0; j < more; j++) {
        int u = (int)vat_rng_below(r, (uint32_t)(nu - 1));
        plan[ne++] = (struct da_plan){u >= 2 ? u + 1 : u, 1, -1};
    }
    int64_t start = (int64_t)(vat_date_from_civil(2023, 1, 1) + vat_rng_range(r, 0, 700)) * 86400;
    int64_t span = vat_rng_range(r, 1, 3) * 86400;
    for (int i = 0; i < ne; i++) {
        bool dup;
        do {
            da_event_id(r, ev[i].id);
            dup = false;
            for (int j = 0; j < i; j++)
                dup = dup || strcmp(ev[i].id, ev[j].id) == 0;
        } while (dup);
        ev[i].user = plan[i].user;
        ev[i].source = (int)vat_rng_below(r, 3);
        ev[i].cents = plan[i].cents;
        if (ev[i].cents < 0 && vat_rng_chance(r, 0.6))
            ev[i].cents = da_prices[vat_rng_below(r, sizeof da_prices / sizeof da_prices[0])];
        else if (ev[i].cents < 0)
            ev[i].cents = vat_gen_cents(r, 500, max_cents < 500 ? 500 : max_cents);
        ev[i].sent = start + vat_rng_range(r, 0, span);
        ev[i].copies = plan[i].copies;
        /* the other users' events: a retry now and then */
        if (i >= end_roles && vat_rng_chance(r, 0.3))
            ev[i].copies = 2;
        blank_amount[i] = i >= first_blank && i < first_nosource;
        blank_source[i] = i >= first_nosource && i < end_roles;
    }

    size_t ndel = 0;
    for (int i = 0; i < ne; i++)
        ndel += (size_t)ev[i].copies;
    struct da_delivery *del = vat_xcalloc(ndel, sizeof *del);
    size_t nd = 0;
    for (int i = 0; i < ne; i++) {
        int64_t at = ev[i].sent + vat_rng_range(r, 0, 2);
        for (int cp = 0; cp < ev[i].copies; cp++, nd++) {
            if (cp > 0)
                at += vat_rng_range(r, 30, 600) << (cp - 1);
            del[nd] = (struct da_delivery){i, at, nd};
        }
    }
    qsort(del, ndel, sizeof *del, da_delivery_cmp);

    vat_csv_add_row(c, da_cols, DA_NCOLS);
    long id = (long)vat_rng_range(r, 1000000, 8000000);
    char money[32], stamp[20];
    for (size_t i = 0; i < ndel; i++) {
        int x = del[i].event;
        id += (long)vat_rng_range(r, 1, 40);
        id = vat_side_next_id(t->side, "dlv_", 8, id);
        vat_csv_row_begin(c);
        vat_csv_addf(c, "dlv_%08ld", id);
        vat_csv_add(c, vat_fmt_timestamp(del[i].at, stamp));
        vat_csv_add(c, ev[x].id);
        vat_csv_add(c, user[ev[x].user]);
        vat_csv_add(c, blank_source[x] ? "" : da_sources[ev[x].source]);
        vat_csv_add(c, blank_amount[x] ? "" : vat_fmt_cents(ev[x].cents, money, sizeof money));
    }
    free(del);
    return 0;
}

static const struct vat_progform da_progform = {
    .tables = da_tables,
    .ntables = sizeof da_tables / sizeof *da_tables,
    .outs = da_outs,
    .nouts = sizeof da_outs / sizeof *da_outs,
    .columns = da_cols,
    .types = da_types,
    .ncols = DA_NCOLS,
    .ordered = true,
    .kind = VAT_AN_OBJECT,
    .rel_tol = DA_REL_TOL,
    .abs_tol = DA_ABS_TOL,
    .nvariants = 3,
    .question = da_pf_question,
    .shape = da_pf_shape,
    .gold_sql = da_pf_gold,
    .trap_sql = da_pf_trap,
    .variant = da_pf_variant,
};

/* The rows with an amount: skipping one, or keeping a test copy of one,
 * moves its user's total.  (No duplicates module: an exact copy is a
 * retried event, which the question already counts once.) */
static void da_targets(const struct vat_task *t, const struct vat_csv *c, unsigned m, bool *is)
{
    (void)t;
    (void)m;
    for (size_t i = 1; i < c->nrows; i++)
        is[i] = vat_csv_get(c, i, C_AMOUNT)[0] != 0;
}

/* Event ids mark retries, so the test entries' marker goes on them. */
static const struct vat_trapmods da_modules = {
    .amount = "amount",
    .id = "event_id",
    .totals = true,
    .label = "user",
    .total = "amount",
    .targets = da_targets};

const struct vat_template vat_tmpl_dedupe_aggregate = {
    .version = VAT_TEMPLATE_V1,
    .name = "dedupe_aggregate",
    .family = "analytics",
    .answer_kind = "value",
    .trap = "Summing every delivery row per user, counting retried events more than once.",
    .summary = "Total amount per user from a webhook log with retried deliveries, each event_id "
               "counted once.",
    .params = da_params,
    .default_count = 12,
    .generate = da_generate,
    .reference = da_reference,
    .confirm = da_confirm,
    .trap_answer = da_trap,
    .check = vat_check_task,
    .giveaways = da_giveaways,
    .answer_columns = da_answer_columns,
    .progform = &da_progform,
    .modules = &da_modules,
    .conventions = da_conventions,
    .defects = da_defects,
};
