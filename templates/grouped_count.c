/* grouped_count.c — the grouped_count analytics template: a support-ticket
 * CSV (ticket_id, opened_at, requester, team, priority, channel) whose team
 * labels were typed by hand in several tools, so one team shows up with
 * different letter case and with spaces before or after its name, and the
 * number of tickets per team with names trimmed and lower-cased.  The trap
 * groups the raw labels; every fixture holds dirty variants (often one that
 * differs from the clean label only by a trailing space), so the trap's keys
 * always differ.  Exports vat_tmpl_grouped_count. */
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

#define GC_MAX_TEAMS 12
#define GC_LABEL 64

enum { C_ID, C_OPENED, C_REQUESTER, C_TEAM, C_PRIORITY, C_CHANNEL, GC_NCOLS };
static const char *const gc_cols[GC_NCOLS] = {"ticket_id", "opened_at", "requester",
                                              "team",      "priority",  "channel"};

/* The question in both styles.  Natural: the business question, and the
 * output convention (one count per team, names in lower case without the
 * spaces around them) as a convention, never the labels' defect. */
static const char *const gc_q_natural[] = {
    "How many tickets does each team have?",
    "What's the ticket count per `team`?",
    "Could you tell me how many tickets each team is [[holding|handling|sitting on]]?",
    "Per team, how many tickets are there?",
    "I need the number of tickets [[for|of]] each team.",
    "Can you count the tickets [[by|per]] team for me?",
    "[[We're|I'm]] [[balancing|planning]] the workload: how many tickets does every team "
    "have?",
    "How are the tickets spread across the teams? I need a count per team.",
};
static const char *const gc_c_natural[] = {
    "[[Please write|Write|Give]] the team names {norm}, one count per team.",
    "Team names [[go|should be]] {norm}, [[one count per team|each team once]].",
    "[[In the answer, each|Each]] team [[appears|should appear]] once, its name {norm}.",
    "[[Key|List]] the teams by name, {norm}[[, each once| and once each]].",
};
/* The explicit question, ways of asking it; the rules that follow name
 * the normalisation in fixed words. */
static const char *const gc_q_explicit[] = {
    "[[Question: how|How]] many tickets does each team have?",
    "Count the tickets per team: what number does each team get?",
    "For every team, how many ticket rows are there?",
    "Compute the number of tickets of each team.",
    "What is the ticket count of each team?",
    "Give the number of tickets per team.",
};
static const char *const gc_r_explicit[] = {
    "[[Two labels name the same team when they are equal|Labels name one team when they are "
    "equal|A label belongs to a team when it is equal to the team's name]] after removing the "
    "spaces at both ends and lower-casing; [[spaces inside a name stay|spaces inside a name "
    "stay as they are|spaces inside a name stay put]]. [[For example|So|Thus]] `Field Ops`, "
    "`field ops ` and ` FIELD OPS` would all be the team `field ops`. [[Count every ticket "
    "row|Every ticket row counts|Count each ticket row once]].",
};
/* The columns as the data description lists them, in each style. */
static const struct vat_prompt_col gc_cols_natural[] = {
    {"ticket_id", ""},
    {"opened_at", "[[YYYY-MM-DD HH:MM:SS|when it was opened, YYYY-MM-DD HH:MM:SS|the time it came "
        "in, YYYY-MM-DD HH:MM:SS]]"},
    {"requester", "[[|who asked|who raised it]]"},
    {"team", "[[the team it is assigned to|the assigned team|the team handling it]]"},
    {"priority", "[[|low to urgent]]"},
    {"channel", "[[|how it came in|where it came in]]"},
};
static const struct vat_prompt_col gc_cols_explicit[] = {
    {"ticket_id", "[[|the ticket number]]"},
    {"opened_at", "[[YYYY-MM-DD HH:MM:SS|the opening time, YYYY-MM-DD HH:MM:SS|when the ticket was "
        "opened, YYYY-MM-DD HH:MM:SS]]"},
    {"requester", "[[|the person who asked]]"},
    {"team", "[[the team the ticket is assigned to|the assigned team|the team that handles "
        "it]]"},
    {"priority", ""},
    {"channel", "[[|the channel it came in through]]"},
};
/* What the explicit description adds after the columns. */
static const char gc_cols_note[] =
    "[[The `team` labels were typed by hand in several tools, so the same team can "
    "appear with different letter case and with spaces before or after its name|The "
    "`team` labels were typed by hand in several tools: one team may appear in "
    "different letter case and with spaces before or after its name|Because the "
    "`team` labels were typed by hand in several tools, one team can show up in "
    "different letter case and with spaces before or after its name]]";
static const char *const gc_giveaways[] = {
    "removing the spaces", "lower-casing", "equal after", "would all be the team",
    "Count every ticket row", "normalised", "tolerance", NULL,
};
/* The labels' defect, which a natural prompt never describes. */
static const char *const gc_defects[] = {
    "typed", "letter case", "stray", "spaces around", "before or after", "variant",
    "spelled differently", "spellings", NULL,
};
static const char *const gc_answer_columns[] = {"team", NULL};
static const char *const gc_states_norm[] = {
    "in lower case without surrounding spaces",
    "in lower case, without leading or trailing spaces",
    "lower-cased and without spaces at either end",
    "in lower case and trimmed of spaces",
    NULL,
};
static const struct vat_convention gc_conventions[] = {
    {"key_normalisation", gc_states_norm},
    {NULL, NULL},
};

/* The question and the rules or conventions that decide it, in the
 * task's style, for both answer forms. */
static void gc_say_question(struct vat_buf *b, struct vat_task *t)
{
    if (vat_prompt_natural(t)) {
        VAT_PROMPT_PUT(b, t, 'q', gc_q_natural, NULL);
        vat_buf_putc(b, ' ');
        const char *kv[] = {"norm", vat_prompt_state(t, "key_normalisation"), NULL};
        VAT_PROMPT_PUT(b, t, 'c', gc_c_natural, kv);
    } else {
        VAT_PROMPT_PUT(b, t, 'q', gc_q_explicit, NULL);
        vat_buf_putc(b, ' ');
        VAT_PROMPT_PUT(b, t, 'r', gc_r_explicit, NULL);
    }
}

static const struct vat_param gc_params[] = {
    {.name = "rows_min", .type = VAT_PARAM_INT, .def = 20, .min = 5, .max = 2000,
     .doc = "fewest data rows in a fixture", .role = VAT_PARAM_ROWS},
    {.name = "rows_max", .type = VAT_PARAM_INT, .def = 150, .min = 5, .max = 2000,
     .doc = "most data rows in a fixture", .role = VAT_PARAM_ROWS},
    {.name = "teams_min", .type = VAT_PARAM_INT, .def = 3, .min = 2, .max = GC_MAX_TEAMS,
     .doc = "fewest distinct teams"},
    {.name = "teams_max", .type = VAT_PARAM_INT, .def = 6, .min = 2, .max = GC_MAX_TEAMS,
     .doc = "most distinct teams"},
    {.name = "variants_max", .type = VAT_PARAM_INT, .def = 3, .min = 1, .max = 6,
     .doc = "most dirty spellings of one team"},
    {.name = "dirty_share", .type = VAT_PARAM_REAL, .def = 0.25, .min = 0, .max = 0.9,
     .doc = "chance that a ticket outside the planted rows uses a dirty spelling of its team"},
    {.name = "trailing_space_chance", .type = VAT_PARAM_REAL, .def = 0.7, .min = 0, .max = 1,
     .doc = "chance that a fixture holds a spelling differing only by a trailing space"},
    VAT_PROGFORM_PARAM,
    {0},
};

/* What the generator planted, for confirm's cross-check. */
struct gc_priv {
    struct vat_an_tally teams; /* normalised team -> tickets, as drawn */
};

static void gc_priv_free(void *p)
{
    struct gc_priv *g = p;
    vat_an_tally_release(&g->teams);
    free(g);
}

/* One team's spellings: [0] clean, then its dirty variants. */
struct gc_team {
    const char *clean;
    char spell[1 + VAT_DIRTY_N][GC_LABEL];
    int nspell;
    uint32_t weight;
};

struct gc_row {
    int team;
    int spell;
};

/* Draws each team's dirty spellings: the trailing-space one (when drawn)
 * for team 0, at least one for team 0 in any case, 0..vmax for the rest. */
static void gc_draw_spellings(struct vat_rng *r, struct gc_team *tm, int nteam, int vmax,
                              bool trailing)
{
    for (int i = 0; i < nteam; i++) {
        enum vat_dirty kinds[VAT_DIRTY_N];
        int nk = 0;
        for (int k = VAT_DIRTY_TRAIL + 1; k < VAT_DIRTY_N; k++)
            kinds[nk++] = (enum vat_dirty)k;
        vat_rng_shuffle(r, kinds, (size_t)nk, sizeof kinds[0]);
        snprintf(tm[i].spell[0], GC_LABEL, "%s", tm[i].clean);
        tm[i].nspell = 1;
        int want = (int)vat_rng_range(r, i == 0 ? 1 : 0, vmax);
        if (i == 0 && trailing) {
            vat_gen_dirty_label(tm[i].clean, VAT_DIRTY_TRAIL, tm[i].spell[tm[i].nspell++],
                                GC_LABEL);
            want--;
        }
        for (int k = 0; k < want && k < nk; k++)
            vat_gen_dirty_label(tm[i].clean, kinds[k], tm[i].spell[tm[i].nspell++], GC_LABEL);
    }
}

/* Draws the rows: every spelling of every team once (so each drawn variant
 * is in the file), the rest by team weight, dirty at dirty_share. */
static struct gc_row *gc_draw_rows(struct vat_rng *r, size_t n, struct gc_team *tm, int nteam,
                                   double dirty_share)
{
    struct gc_row *rows = vat_xcalloc(n, sizeof *rows);
    uint32_t weight[GC_MAX_TEAMS];
    for (int i = 0; i < nteam; i++)
        weight[i] = tm[i].weight;
    size_t k = 0;
    for (int i = 0; i < nteam; i++)
        for (int s = 0; s < tm[i].nspell; s++, k++)
            rows[k] = (struct gc_row){i, s};
    for (; k < n; k++) {
        int g = (int)vat_rng_weighted(r, weight, (size_t)nteam);
        rows[k].team = g;
        rows[k].spell = tm[g].nspell > 1 && vat_rng_chance(r, dirty_share)
                            ? 1 + (int)vat_rng_below(r, (uint32_t)(tm[g].nspell - 1))
                            : 0;
    }
    vat_rng_shuffle(r, rows, n, sizeof *rows);
    return rows;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int gc_generate(struct vat_task *t, struct vat_rng *r, struct vat_err *e)
{
    static const char *const priorities[] = {"low", "normal", "normal", "normal", "high",
                                             "high", "urgent"};
    static const char *const channels[] = {"email", "email", "web", "chat", "chat", "phone"};
    long rmin = vat_task_int(t, "rows_min"), rmax = vat_task_int(t, "rows_max");
    long gmin = vat_task_int(t, "teams_min"), gmax = vat_task_int(t, "teams_max");
    int vmax = (int)vat_task_int(t, "variants_max");
    double dirty_share = vat_task_real(t, "dirty_share");
    double trailing_chance = vat_task_real(t, "trailing_space_chance");

    const char *names[GC_MAX_TEAMS];
    long want = vat_rng_range(r, gmin, gmax);
    if (want > GC_MAX_TEAMS)
        want = GC_MAX_TEAMS;
    int nteam = (int)vat_gen_distinct(r, "team", names, (size_t)want);
    if (nteam < 2)
        return vat_err_set(e, "%s: the 'team' word list has fewer than 2 entries", t->id);
    struct gc_team *tm = vat_xcalloc((size_t)nteam, sizeof *tm);
    for (int i = 0; i < nteam; i++) {
        tm[i].clean = names[i];
        tm[i].weight = (uint32_t)vat_rng_range(r, 1, 5);
    }
    bool trailing = vat_rng_chance(r, trailing_chance);
    gc_draw_spellings(r, tm, nteam, vmax, trailing);
    size_t nspell = 0;
    for (int i = 0; i < nteam; i++)
        nspell += (size_t)tm[i].nspell;

    long nl = vat_rng_range(r, rmin, rmax);
    size_t n = nl < (long)nspell ? nspell : (size_t)nl;
    struct gc_row *rows = gc_draw_rows(r, n, tm, nteam, dirty_share);

    /* Open times ascend with the ticket ids, in working hours mostly. */
    int64_t start = (int64_t)(vat_date_from_civil(2023, 1, 2) + (int32_t)vat_rng_range(r, 0, 700))
                    * 86400;
    int64_t span = (int64_t)vat_rng_range(r, 7, 60) * 86400;
    int64_t *secs = vat_xcalloc(n, sizeof *secs);
    for (size_t i = 0; i < n; i++) {
        int64_t day = vat_rng_range(r, 0, span / 86400);
        int64_t tod = vat_rng_chance(r, 0.85) ? vat_rng_range(r, 8 * 3600, 18 * 3600)
                                              : vat_rng_range(r, 0, 86399);
        secs[i] = start + day * 86400 + tod;
    }
    qsort(secs, n, sizeof *secs, cmp_i64);

    struct vat_csv c = VAT_CSV_INIT;
    vat_csv_add_row(&c, gc_cols, GC_NCOLS);
    long id = (long)vat_rng_range(r, 20000, 80000);
    struct gc_priv *pv = vat_xcalloc(1, sizeof *pv);
    char who[64], when[20], key[GC_LABEL];
    for (size_t i = 0; i < n; i++) {
        const struct gc_team *g = &tm[rows[i].team];
        id += (long)vat_rng_range(r, 1, 3);
        id = vat_side_next_id(t->side, "TCK-", 6, id);
        vat_csv_row_begin(&c);
        vat_csv_addf(&c, "TCK-%06ld", id);
        vat_csv_add(&c, vat_fmt_timestamp(secs[i], when));
        vat_csv_add(&c, vat_gen_person(r, who, sizeof who));
        vat_csv_add(&c, g->spell[rows[i].spell]);
        vat_csv_add(&c, VAT_PICK(r, priorities));
        vat_csv_add(&c, VAT_PICK(r, channels));
        vat_an_tally_add(&pv->teams, vat_norm_label(g->clean, key, sizeof key), 1);
    }
    free(secs);
    free(rows);
    t->priv = pv;
    t->priv_free = gc_priv_free;

    if (vat_an_write_csv(t, &c, ".csv", "main", e) < 0) {
        vat_csv_release(&c);
        free(tm);
        return -1;
    }

    struct vat_buf b = VAT_BUF_INIT;
    bool nat = vat_prompt_natural(t);
    struct vat_buf cols = VAT_BUF_INIT;
    vat_prompt_cols(&cols, t, nat ? gc_cols_natural : gc_cols_explicit,
                    VAT_N_OF(gc_cols_natural), NULL);
    if (!nat) {
        vat_buf_puts(&cols, ". ");
        vat_prompt_say(&cols, t, 'k', gc_cols_note, NULL);
    }
    const char *kv[] = {
        "topic", "[[the support queue|our helpdesk tickets|the ticket backlog]]",
        "what", nat ? "[[our support tickets{#pl}|the helpdesk tickets{#pl}|an export of "
                      "our support tickets|the tickets from our helpdesk{#pl}]]"
                    : "[[an export of support tickets|a support-ticket export|the tickets of a "
                      "support desk{#pl}]]",
        "unit", "ticket",
        "cols", cols.data,
        NULL,
    };
    vat_prompt_open(&b, t, kv);
    vat_prompt_data(&b, t, kv);
    vat_buf_release(&cols);
    vat_buf_puts(&b, "\n\n");
    gc_say_question(&b, t);
    vat_buf_puts(&b, "\n\n");
    if (nat) {
        vat_prompt_answer(&b, t, "[[a JSON object from each team to its [[number of "
                                 "tickets|ticket count]] as an integer|a JSON object mapping "
                                 "every team to how many tickets it has, as an integer]], "
                                 "[[like|for example|e.g.]] {\"<team>\": <count>}");
    } else {
        vat_prompt_answer(&b, t, "[[an object whose keys are the normalised team names "
                                 "(trimmed and in lower case, exactly as described above) and "
                                 "whose values are the ticket counts as JSON integers|an object "
                                 "mapping each normalised team name (trimmed and in lower case, "
                                 "as described above) to its ticket count, a JSON integer]], "
                                 "[[for example|like]] {\"<team>\": <count>, \"<other team>\": "
                                 "<count>}. [[Key order does not matter|The order of the keys "
                                 "does not matter|Keys may come in any order]]. [[Counts must be "
                                 "exact|Only exact counts pass]]");
        vat_buf_putc(&b, ' ');
        vat_prompt_tolerance(&b, t, 0, 0);
    }
    vat_buf_puts(&b, "\n\n");
    vat_an_prompt_csv(&b, t, 0, &c);
    t->prompt = vat_buf_detach(&b);
    vat_csv_release(&c);

    t->params = json_pack("{s:s, s:s, s:s}", "group_by", "team", "count_of", "tickets",
                          "key_normalisation", "trim spaces at both ends, lower-case");

    free(tm);

    struct vat_an_spec s = {.shape = "object", .integer = true, .rel_tol = 0, .abs_tol = 0};
    t->spec = vat_an_value_spec(&s);
    return 0;
}

/* Tickets per team over the rows read back from the fixture: by the
 * normalised label (gold) or by the raw label (the trap). */
static json_t *gc_count_file(const struct vat_task *t, bool normalise, struct vat_err *e)
{
    struct vat_csv c = VAT_CSV_INIT;
    if (vat_an_read_csv(t, 0, gc_cols, GC_NCOLS, &c, e) != 0)
        return NULL;
    struct vat_an_tally tl = VAT_AN_TALLY_INIT;
    char key[GC_LABEL];
    for (size_t i = 1; i < c.nrows; i++) {
        const char *raw = vat_csv_get(&c, i, C_TEAM);
        vat_norm_label(raw, key, sizeof key);
        if (key[0] == 0 || strlen(raw) >= GC_LABEL) {
            vat_err_set(e, "%s: '%s' record %zu: team '%s' is blank or too long", t->id,
                        t->fixture[0].path, i + 1, raw);
            vat_an_tally_release(&tl);
            vat_csv_release(&c);
            return NULL;
        }
        vat_an_tally_add(&tl, normalise ? key : raw, 1);
    }
    json_t *o = vat_an_tally_counts_json(&tl);
    vat_an_tally_release(&tl);
    vat_csv_release(&c);
    return o;
}

static int gc_reference(struct vat_task *t, struct vat_err *e)
{
    return vat_an_gold_from(t, gc_count_file(t, true, e), "the fixture has no ticket", e);
}

/* SQL GROUP BY lower(trim(team)) over the CSV loaded into SQLite (trim and
 * lower are SQLite's own: spaces only, ASCII case), then the generator's
 * planted counts per team when at hand.  Counts are exact. */
static int gc_confirm(const struct vat_task *t, struct vat_err *e)
{
    static const struct vat_an_query q = {
        .table = "tickets", .kind = VAT_AN_OBJECT,
        .sql = "SELECT lower(trim(team)) AS k, COUNT(*) FROM tickets GROUP BY k ORDER BY k"};
    int rc = vat_an_confirm_query(t, &q, 0, 0, e);
    if (rc != 0 || !t->priv)
        return rc;
    struct gc_priv *pv = t->priv;
    return vat_an_confirm_value(t, vat_an_tally_counts_json(&pv->teams),
                                "the generator's planted counts", 0, 0, e);
}

static int gc_trap(struct vat_task *t, struct vat_err *e)
{
    return vat_an_trap_from(t, gc_count_file(t, false, e));
}

/* ---- the program form ------------------------------------------------------ */

static const char *const gc_types[GC_NCOLS] = {"TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT"};
static const char *const gc_tables[] = {"tickets", "support_tickets", "ticket_export",
                                        "helpdesk_tickets", "tickets_csv"};
static const char *const gc_outs[] = {"ticket_count", "tickets", "n_tickets", "num_tickets",
                                      "total_tickets"};

static char *gc_pf_question(struct vat_task *t)
{
    struct vat_buf b = VAT_BUF_INIT;
    gc_say_question(&b, t);
    return vat_buf_detach(&b);
}

/* The key column is spelled as normalised, so gold is the one reading of
 * the question: not a raw label of the group, not a clean spelling. */
static char *gc_pf_shape(struct vat_task *t, const struct vat_pf_names *n)
{
    const char *kv[] = {"out", n->out, "dir", n->descending ? "descending" : "ascending", NULL};
    if (vat_prompt_natural(t))
        return vat_prompt_text(
            t, 's',
            "[[Return|It should return|I'd like]] two columns, `team` (the team's name as "
            "asked above) and `{out}` ([[its number of tickets|how many tickets it has]]), "
            "one row per team, [[ordered|sorted]] by `team` {dir}.",
            kv);
    return vat_prompt_text(
        t, 's',
        "[[It must return|The result must have|Return]] exactly two columns, `team` (the "
        "team's normalised name: the label with the spaces at both ends removed, in lower "
        "case, as in the question's example) and `{out}` (the team's number of tickets, an "
        "integer), one row per normalised team and no other rows, [[ordered|sorted]] by the "
        "normalised `team` {dir} (SQLite's default text order).",
        kv);
}

static char *gc_pf_gold(const struct vat_task *t, const struct vat_pf_names *n)
{
    (void)t;
    return vat_xasprintf("SELECT LOWER(TRIM(team)) AS team, COUNT(*) AS %s\nFROM %s\n"
                         "GROUP BY LOWER(TRIM(team))\nORDER BY LOWER(TRIM(team))%s",
                         n->out, n->table, n->descending ? " DESC" : "");
}

/* The named mistake: the raw labels grouped. */
static char *gc_pf_trap(const struct vat_task *t, const struct vat_pf_names *n)
{
    (void)t;
    return vat_xasprintf("SELECT team, COUNT(*) AS %s\nFROM %s\nGROUP BY team\nORDER BY team%s",
                         n->out, n->table, n->descending ? " DESC" : "");
}

/* The teams of the main fixture, as labels of the "team" word list (the
 * generator's), in list order: *nmain of them first, then the list's
 * other words.  Returns how many words there are in all (0 with e set
 * when the file cannot be read). */
static size_t gc_pf_teams(const struct vat_task *t, const char **out, size_t cap, size_t *nmain,
                          struct vat_err *e)
{
    struct vat_csv m = VAT_CSV_INIT;
    if (vat_an_read_csv(t, 0, gc_cols, GC_NCOLS, &m, e) != 0)
        return 0;
    size_t nw = 0, n = 0;
    const char *const *words = vat_words("team", &nw);
    char a[GC_LABEL], b[GC_LABEL];
    for (int pass = 0; pass < 2; pass++) {
        for (size_t w = 0; w < nw && n < cap; w++) {
            vat_norm_label(words[w], a, sizeof a);
            bool in_main = false;
            for (size_t i = 1; i < m.nrows && !in_main; i++)
                in_main = strcmp(vat_norm_label(vat_csv_get(&m, i, C_TEAM), b, sizeof b), a) == 0;
            if (in_main == (pass == 0))
                out[n++] = words[w];
        }
        if (pass == 0)
            *nmain = n;
    }
    vat_csv_release(&m);
    if (n < 3)
        vat_err_set(e, "%s: the 'team' word list has fewer than 3 entries", t->id);
    return n < 3 ? 0 : n;
}

/* Variant k: the main fixture's teams but one (a team with no ticket
 * here), and one team the main fixture lacks, with new tickets.  The
 * first team has a single ticket, spelled only dirty (no clean label to
 * show: the key is the normalised name, not a raw label of the group;
 * and a count of 1, the boundary); the second has its clean label and
 * one differing only by a trailing space (the trap's corner: the raw
 * labels are two groups; lower() alone keeps the space); the third its
 * clean label and an upper-case one (trim() alone keeps the case); the
 * others once each, clean; then any team but the first, clean or dirty
 * at random.  `requester`, `priority` and
 * `channel` are sometimes blank (every row is a ticket: COUNT(column)
 * misses those), each at least once. */
static int gc_pf_variant(const struct vat_task *t, struct vat_rng *r, int k, struct vat_csv *c,
                         struct vat_err *e)
{
    static const char *const priorities[] = {"low", "normal", "normal", "high", "urgent"};
    static const char *const channels[] = {"email", "web", "chat", "phone"};
    static const enum vat_dirty single[3] = {VAT_DIRTY_UPPER_LEAD, VAT_DIRTY_LOWER_TRAIL,
                                             VAT_DIRTY_BOTH};
    const char *words[GC_MAX_TEAMS + 32];
    size_t nmain = 0;
    size_t nw = gc_pf_teams(t, words, sizeof words / sizeof *words, &nmain, e);
    if (nw == 0)
        return -1;
    /* The teams: the main ones but the dropped one, then a new one. */
    const char *team[GC_MAX_TEAMS + 1];
    int nt = 0;
    size_t drop = nmain ? vat_rng_below(r, (uint32_t)nmain) : nw;
    for (size_t i = 0; i < nmain && nt < GC_MAX_TEAMS; i++)
        if (i != drop)
            team[nt++] = words[i];
    if (nmain < nw)
        team[nt++] = words[nmain + vat_rng_below(r, (uint32_t)(nw - nmain))];
    /* (a main fixture of two teams: a third from the list) */
    for (size_t i = 0; nt < 3 && i < nw; i++) {
        bool have = i == drop;
        for (int j = 0; j < nt; j++)
            have = have || team[j] == words[i];
        if (!have)
            team[nt++] = words[i];
    }
    vat_rng_shuffle(r, team, (size_t)nt, sizeof *team);

    size_t n = (size_t)vat_rng_range(r, 14, 30);
    if (n < (size_t)nt + 6)
        n = (size_t)nt + 6;
    /* The planted rows first, then shuffled into the file's order. */
    struct gc_vrow {
        int g;
        int dirty; /* -1 clean, else an enum vat_dirty */
        bool blank_who, blank_priority, blank_channel;
    } *rows = vat_xcalloc(n, sizeof *rows);
    for (size_t i = 0; i < n; i++) {
        struct gc_vrow *x = &rows[i];
        x->dirty = -1;
        if (i == 0) {
            x->dirty = (int)single[(k - 1) % 3];
        } else if (i < 4) {
            x->g = 1;
            x->dirty = i == 3 ? (int)VAT_DIRTY_TRAIL : -1;
        } else if (i < 6) {
            x->g = 2;
            x->dirty = i == 5 ? (int)VAT_DIRTY_UPPER : -1;
        } else if (i < (size_t)nt + 3) {
            x->g = (int)i - 3; /* every other team once */
        } else {
            x->g = 1 + (int)vat_rng_below(r, (uint32_t)(nt - 1));
            x->dirty = vat_rng_chance(r, 0.3) ? (int)vat_rng_below(r, VAT_DIRTY_N) : -1;
        }
        x->blank_who = i == 2 || vat_rng_chance(r, 0.15);
        x->blank_priority = i == 4 || vat_rng_chance(r, 0.15);
        x->blank_channel = i == 1 || vat_rng_chance(r, 0.15);
    }
    vat_rng_shuffle(r, rows, n, sizeof *rows);

    vat_csv_add_row(c, gc_cols, GC_NCOLS);
    int64_t secs = (int64_t)(vat_date_from_civil(2023, 1, 2) + (int32_t)vat_rng_range(r, 0, 700)) *
                   86400;
    long id = (long)vat_rng_range(r, 20000, 80000);
    char label[GC_LABEL], who[64], when[20];
    for (size_t i = 0; i < n; i++) {
        const struct gc_vrow *x = &rows[i];
        if (x->dirty < 0)
            snprintf(label, sizeof label, "%s", team[x->g]);
        else
            vat_gen_dirty_label(team[x->g], (enum vat_dirty)x->dirty, label, sizeof label);
        id += (long)vat_rng_range(r, 1, 3);
        id = vat_side_next_id(t->side, "TCK-", 6, id);
        secs += vat_rng_range(r, 60, 7200);
        vat_gen_person(r, who, sizeof who);
        const char *priority = VAT_PICK(r, priorities);
        const char *channel = VAT_PICK(r, channels);
        vat_csv_row_begin(c);
        vat_csv_addf(c, "TCK-%06ld", id);
        vat_csv_add(c, vat_fmt_timestamp(secs, when));
        vat_csv_add(c, x->blank_who ? "" : who);
        vat_csv_add(c, label);
        vat_csv_add(c, x->blank_priority ? "" : priority);
        vat_csv_add(c, x->blank_channel ? "" : channel);
    }
    free(rows);
    return 0;
}

static const struct vat_progform gc_progform = {
    .tables = gc_tables,
    .ntables = sizeof gc_tables / sizeof *gc_tables,
    .outs = gc_outs,
    .nouts = sizeof gc_outs / sizeof *gc_outs,
    .columns = gc_cols,
    .types = gc_types,
    .ncols = GC_NCOLS,
    .ordered = true,
    .kind = VAT_AN_OBJECT,
    .rel_tol = 0,
    .abs_tol = 0,
    .nvariants = 3,
    .question = gc_pf_question,
    .shape = gc_pf_shape,
    .gold_sql = gc_pf_gold,
    .trap_sql = gc_pf_trap,
    .variant = gc_pf_variant,
};

/* Ticket ids are unique: a repeated row is a copy. */
static const struct vat_trapmods gc_modules = {
    .duplicates = true, .id = "ticket_id", .totals = true, .label = "team"};

const struct vat_template vat_tmpl_grouped_count = {
    .version = VAT_TEMPLATE_V1,
    .name = "grouped_count",
    .family = "analytics",
    .answer_kind = "value",
    .trap = "Grouping the raw team labels, so case and edge-space variants of one team are "
            "counted as separate teams.",
    .summary = "Tickets per team, team names trimmed and lower-cased.",
    .params = gc_params,
    .default_count = 12,
    .generate = gc_generate,
    .reference = gc_reference,
    .confirm = gc_confirm,
    .trap_answer = gc_trap,
    .check = vat_check_task,
    .giveaways = gc_giveaways,
    .answer_columns = gc_answer_columns,
    .progform = &gc_progform,
    .conventions = gc_conventions,
    .defects = gc_defects,
    .modules = &gc_modules,
};
