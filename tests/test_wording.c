/* test_wording.c — what the prompts say, read as a reader would, over
 * every registered template that writes natural prompts, drawn in both
 * styles and both answer forms as the default corpus draws them:
 *   - params stated: every convention a template declares (a key of its
 *     params that decides the answer, and the phrases that state it) is
 *     stated in every natural prompt whose task has that param;
 *   - no defect described: no natural prompt holds a phrase that describes
 *     the data's defect or the mistake, from the general list below or the
 *     template's own (its `defects` member);
 *   - proofread: over all the prompts (2,000 and more), no doubled word,
 *     no article before the wrong sound, no slip of the fixed list of
 *     agreement slips, no noun repeating its verb ("exported an export"),
 *     no grammar markup left over, no question mark after a request;
 *   - realisations: each template and style draws at least 50 distinct
 *     phrasings over 60 tasks (so at least 50 over any larger count).
 * Templates that accept trap modules (templates/trapmod.h) also draw
 * tasks at levels 3 and 4, where modules are armed and their conventions
 * join the prompt, held to the same rules.
 * The lists grow with every slip found. */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "prompt.h"
#include "prompt_stats.h"
#include "rules.h"
#include "template.h"
#include "testutil.h"
#include "trapmod.h"

#define SEED 44044u
#define PER_STYLE 60
/* Tasks per style drawn at levels 3 and 4 (alternately) from templates
 * that accept trap modules, after the PER_STYLE level-1 ones. */
#define ARMED_PER_STYLE 8
#define MIN_REALISATIONS 50

/* One drawn prompt, kept for every test of the group. */
struct drawn {
    const struct vat_template *tmpl;
    bool natural;
    char *prompt, *wording, *phrasing, *id;
    json_t *params;
};

struct corpus {
    struct drawn *d;
    size_t n;
};

/* ---- the lists --------------------------------------------------------------- */

/* Phrases that describe a data defect or a mistake, whatever the template:
 * a natural prompt states the convention instead. */
static const char *const general_defects[] = {
    "typed by hand", "letter case and", "stray space", "disagree on the sign",
    "blank when", "typo", "misspel", "inconsistent", "dirty", "messy", "by mistake",
    "the trap", "careful", "beware", "watch out", "don't forget", "do not forget",
    "positive or negative", "duplicated", "duplicates", "retried", "redelivered",
    "sometimes blank", "sometimes missing", "not always", "may be written", NULL,
};

/* Plural nouns a data description names: "is the ... reviews" is a slip. */
static const char *const plural_nouns[] = {
    "reviews", "tickets", "orders", "payments", "shipments", "entries", "sales", "accounts",
    "invoices", "customers", "deliveries", "claims", "lines", "messages", "postings",
    "receipts", "rows", "events", "records", NULL,
};

/* What follows the head of a noun phrase when the phrase ends there ("is
 * our support tickets, one per row", "is the product reviews from our
 * shop"); any other word continues a longer phrase ("is the orders
 * table", "is our app's payments webhook log"). */
static const char *const np_ends[] = {
    ",", "from", "with", "one", "that", "which", "in", "of", "for", "per", "and", "below",
    "above", "here", "attached", NULL,
};

/* Words that end a noun phrase's head before a plural noun ("the total
 * of the orders"): a gap holding one of them is no slip. */
static const char *const gap_breaks[] = {
    "of", "from", "for", "per", "in", "by", "with", "on", "to", "and", "or", "at", "over",
    "under", "about", NULL,
};

/* Fixed slips found so far, lower case: each must never come back. */
static const char *const known_slips[] = {
    "here's our", "here's the", "this is our support tickets", "this is the product reviews",
    "here is our support tickets", "here is the product reviews", "exported an export",
    "numbers match when it agrees", "a number matches when they agree",
    "the order of the fields is exactly that and", "are not part of it, and is",
    "each customer under where", "with each customer placed by", "goes going by",
    "orders count by the date it", "a question about a sql question", "on a sql question",
    "a purchase is one `event_id`: one purchase", "(whole cents) (null", NULL,
};

/* ---- helpers ------------------------------------------------------------------- */

static const char *find_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] &&
               tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return hay;
    }
    return NULL;
}

static bool in_list(const char *w, const char *const *list)
{
    for (size_t i = 0; list[i]; i++)
        if (strcmp(w, list[i]) == 0)
            return true;
    return false;
}

/* The value of a param as text ("{}" in a statement stands for it). */
static char *param_text(const json_t *v)
{
    if (json_is_string(v))
        return vat_xstrdup(json_string_value(v));
    if (json_is_integer(v))
        return vat_xasprintf("%lld", (long long)json_integer_value(v));
    return NULL;
}

/* A statement with "{}" replaced by value (new string). */
static char *statement(const char *state, const char *value)
{
    const char *at = strstr(state, "{}");
    if (!at)
        return vat_xstrdup(state);
    return vat_xasprintf("%.*s%s%s", (int)(at - state), state, value ? value : "", at + 2);
}

/* ---- drawing ------------------------------------------------------------------- */

static void draw_all(struct corpus *c)
{
    size_t cap = 0;
    const struct vat_template *tm;
    for (size_t k = 0; (tm = vat_tt_each(k)); k++) {
        if (!tm->giveaways)
            continue;
        for (int style = 0; style < 2; style++) {
            struct vat_tt_env *v = vat_tt_env_new(tm, SEED);
            /* as the default corpus draws them: every format and form */
            json_t *defaults = vat_template_default_params(tm);
            const char *keys[] = {"fixture_format", "answer_form"};
            for (size_t i = 0; i < 2; i++)
                if (json_object_get(defaults, keys[i]))
                    json_object_set(v->cfg, keys[i], json_object_get(defaults, keys[i]));
            json_decref(defaults);
            json_object_set_new(v->cfg, "prompt_style",
                                json_string(style ? "natural" : "explicit"));
            uint32_t armed = vat_trapmod_accepted(tm) ? ARMED_PER_STYLE : 0;
            for (uint32_t i = 0; i < PER_STYLE + armed; i++) {
                struct vat_task t;
                struct vat_replay r;
                if (i >= PER_STYLE) {
                    json_t *w = json_array();
                    for (int l = 1; l <= 5; l++)
                        json_array_append_new(w, json_integer(l == 3 + (int)(i % 2)));
                    json_object_set_new(v->cfg, "difficulty", w);
                }
                vat_tt_draw(v, &t, NULL, i, 6000, 40, &r);
                if (c->n == cap) {
                    cap = cap ? 2 * cap : 1024;
                    c->d = vat_xrealloc(c->d, cap * sizeof *c->d);
                }
                struct drawn *d = &c->d[c->n++];
                d->tmpl = tm;
                d->natural = style == 1;
                d->prompt = vat_xstrdup(t.prompt);
                d->wording = vat_prompt_wording(t.prompt);
                d->phrasing = vat_xstrdup(t.phrasing);
                d->id = vat_xstrdup(t.id);
                d->params = json_incref(t.params);
                assert_string_equal(t.prompt_style, style ? "natural" : "explicit");
                vat_task_clear(&t);
            }
            vat_tt_env_free(v);
        }
    }
}

static int group_setup(void **state)
{
    struct corpus *c = calloc(1, sizeof *c);
    draw_all(c);
    *state = c;
    return 0;
}

static int group_teardown(void **state)
{
    struct corpus *c = *state;
    for (size_t i = 0; i < c->n; i++) {
        free(c->d[i].prompt);
        free(c->d[i].wording);
        free(c->d[i].phrasing);
        free(c->d[i].id);
        json_decref(c->d[i].params);
    }
    free(c->d);
    free(c);
    return 0;
}

/* ---- params stated ------------------------------------------------------------- */

static void test_params_stated(void **state)
{
    struct corpus *c = *state;
    const struct vat_template *tm;
    for (size_t k = 0; (tm = vat_tt_each(k)); k++) {
        if (!tm->giveaways)
            continue;
        VAT_RULE(tm->conventions && tm->conventions[0].param, tm, "conventions stated",
                 "declare in .conventions the params that decide the answer and the phrases "
                 "that state each",
                 "it writes natural prompts but declares no conventions");
        for (const struct vat_convention *cv = tm->conventions; cv->param; cv++) {
            long applied = 0;
            for (size_t i = 0; i < c->n; i++) {
                const struct drawn *d = &c->d[i];
                if (d->tmpl != tm || !d->natural)
                    continue;
                const json_t *v = json_object_get(d->params, cv->param);
                if (!v)
                    continue;
                applied++;
                char *value = param_text(v);
                bool found = false;
                for (const char *const *s = cv->states; *s && !found; s++) {
                    char *want = statement(*s, value);
                    found = find_ci(d->wording, want) != NULL;
                    free(want);
                }
                free(value);
                VAT_RULE(found, tm, "conventions stated",
                         "write one of the convention's statements into every natural prompt, "
                         "drawn with vat_prompt_state(t, param)",
                         "%s: the natural prompt never states the convention of '%s' (one of "
                         "its declared statements, e.g. \"%s\"):\n%s",
                         d->id, cv->param, cv->states[0], d->wording);
            }
            VAT_RULE(applied > 0, tm, "conventions stated",
                     "name in a convention a key of t->params", "convention '%s' names a param "
                                                               "no natural task has",
                     cv->param);
        }
    }
}

/* ---- no defect described -------------------------------------------------------- */

static void test_no_defect_described(void **state)
{
    struct corpus *c = *state;
    long checked = 0;
    for (size_t i = 0; i < c->n; i++) {
        const struct drawn *d = &c->d[i];
        if (!d->natural)
            continue;
        checked++;
        const char *mend = "state the convention that decides the answer instead, in domain "
                           "words; never describe the data's defect or the mistake";
        for (const char *const *g = general_defects; *g; g++)
            VAT_RULE(!find_ci(d->wording, *g), d->tmpl, "no defect described", mend,
                     "%s: the natural prompt describes a defect (\"%s\"):\n%s", d->id, *g,
                     d->wording);
        for (const char *const *g = d->tmpl->defects; g && *g; g++)
            VAT_RULE(!find_ci(d->wording, *g), d->tmpl, "no defect described", mend,
                     "%s: the natural prompt describes the template's defect (\"%s\"):\n%s",
                     d->id, *g, d->wording);
    }
    print_message("  %ld natural prompts describe no defect\n", checked);
    assert_true(checked >= 1000);
}

/* ---- proofreading --------------------------------------------------------------- */

/* The words of a text, lower case, with the punctuation that ends a
 * clause kept as the token "," so clause-bound rules see it; backticked
 * code is one token "`". */
struct words {
    char **w;
    size_t n, cap;
};

static void push(struct words *ws, const char *s, size_t n)
{
    if (ws->n == ws->cap) {
        ws->cap = ws->cap ? 2 * ws->cap : 256;
        ws->w = vat_xrealloc(ws->w, ws->cap * sizeof *ws->w);
    }
    char *x = vat_xstrndup(s, n);
    for (char *p = x; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    ws->w[ws->n++] = x;
}

static void split_words(const char *text, struct words *ws)
{
    for (const char *p = text; *p;) {
        if (*p == '`') {
            const char *z = strchr(p + 1, '`');
            push(ws, "`", 1);
            p = z ? z + 1 : p + strlen(p);
        } else if (isalpha((unsigned char)*p) || isdigit((unsigned char)*p)) {
            const char *s = p;
            while (isalnum((unsigned char)*p) || *p == '\'' || *p == '-' || *p == '_')
                p++;
            push(ws, s, (size_t)(p - s));
        } else {
            if (strchr(".,;:!?()\n\"", *p))
                push(ws, ",", 1);
            p++;
        }
    }
}

static void free_words(struct words *ws)
{
    for (size_t i = 0; i < ws->n; i++)
        free(ws->w[i]);
    free(ws->w);
}

/* The first slip in the text, described in a new string, or NULL. */
static char *proofread(const char *text)
{
    for (const char *const *k = known_slips; *k; k++)
        if (find_ci(text, *k))
            return vat_xasprintf("a known slip \"%s\"", *k);
    static const char *const markup[] = {"[[", "]]", "{#pl}", "{an}", "{An}", "\x01", "\x02",
                                         "\x03", "  ", " ,", NULL};
    for (const char *const *m = markup; *m; m++)
        if (strstr(text, *m))
            return vat_xasprintf("grammar markup or a stray space left over (\"%s\")", *m);
    for (const char *p = strstr(text, " ."); p; p = strstr(p + 1, " ."))
        if (p[2] != '.')
            return vat_xstrdup("a space before a full stop");
    struct words ws = {0};
    split_words(text, &ws);
    char *slip = NULL;
    for (size_t i = 0; i < ws.n && !slip; i++) {
        const char *w = ws.w[i], *next = i + 1 < ws.n ? ws.w[i + 1] : "";
        /* a doubled word */
        if (isalpha((unsigned char)w[0]) && strcmp(w, next) == 0)
            slip = vat_xasprintf("the doubled word \"%s %s\"", w, next);
        /* an article before the wrong sound (lower-case words only:
         * acronyms and code are read by their letters) */
        else if (strcmp(w, "a") == 0 && strchr("aeio", next[0]) && next[0] &&
                 strncmp(next, "one", 3) != 0 && strncmp(next, "once", 4) != 0 &&
                 strncmp(next, "eu", 2) != 0)
            slip = vat_xasprintf("\"a %s\"", next);
        else if (strcmp(w, "an") == 0 && next[0] && isalpha((unsigned char)next[0]) &&
                 !strchr("aeiou", next[0]) && strncmp(next, "hour", 4) != 0 &&
                 strncmp(next, "honest", 6) != 0 && strcmp(next, "sql") != 0 &&
                 strcmp(next, "sqlite") != 0 && strcmp(next, "xlsx") != 0 &&
                 strcmp(next, "http") != 0 && strcmp(next, "html") != 0)
            slip = vat_xasprintf("\"an %s\"", next);
        /* "is/was the|our|this ... <plural>" with no "of"-like break */
        else if ((strcmp(w, "is") == 0 || strcmp(w, "was") == 0) &&
                 (strcmp(next, "the") == 0 || strcmp(next, "our") == 0 ||
                  strcmp(next, "this") == 0)) {
            for (size_t j = i + 2; j < ws.n && j <= i + 4; j++) {
                const char *x = ws.w[j];
                if (strcmp(x, ",") == 0 || strcmp(x, "`") == 0 || in_list(x, gap_breaks))
                    break;
                if (in_list(x, plural_nouns)) {
                    const char *after = j + 1 < ws.n ? ws.w[j + 1] : ",";
                    if (in_list(after, np_ends))
                        slip = vat_xasprintf("\"%s %s ... %s\": the verb does not agree", w,
                                             next, x);
                    break;
                }
            }
        }
        /* a noun repeating its verb: "exported an export" */
        else if (strlen(w) > 5 && strcmp(w + strlen(w) - 2, "ed") == 0) {
            char stem[64];
            size_t sl = strlen(w) - 2;
            if (sl >= sizeof stem)
                sl = sizeof stem - 1;
            memcpy(stem, w, sl);
            stem[sl] = 0;
            if (sl > 3 && stem[sl - 1] == stem[sl - 2]) /* logged -> log */
                stem[sl - 1] = 0;
            for (size_t j = i + 1; j < ws.n && j <= i + 3 && !slip; j++)
                if (strncmp(ws.w[j], stem, strlen(stem)) == 0 &&
                    strlen(ws.w[j]) <= strlen(stem) + 1)
                    slip = vat_xasprintf("\"%s ... %s\": the noun repeats its verb", w, ws.w[j]);
        }
    }
    free_words(&ws);
    if (slip)
        return slip;
    /* one quoted status agreeing with a plural verb: "'settled' mean paid" */
    for (const char *q = strstr(text, "' mean "); q; q = strstr(q + 1, "' mean ")) {
        const char *open = q - 1;
        while (open > text && *open != '\'')
            open--;
        bool listed = open - text >= 4 && (strncmp(open - 4, " or ", 4) == 0 ||
                                            strncmp(open - 5, " and ", 5) == 0 ||
                                            strncmp(open - 2, ", ", 2) == 0);
        if (*open == '\'' && !listed)
            return vat_xasprintf("one value with a plural verb: \"%.*s\"",
                                 (int)(q + 7 - open), open);
    }
    /* a label said twice: "Question: Question: how ..." */
    for (const char *p = strstr(text, ": "); p; p = strstr(p + 1, ": ")) {
        const char *w = p;
        while (w > text && isalpha((unsigned char)w[-1]))
            w--;
        size_t n = (size_t)(p - w);
        if (n && strncmp(p + 2, w, n) == 0 && p[2 + n] == ':')
            return vat_xasprintf("a label said twice: \"%.*s\"", (int)(n * 2 + 3), w);
    }
    /* a request that ends in a question mark ("Please write ... ?") */
    const char *s = text;
    while (*s) {
        while (*s == ' ' || *s == '\n')
            s++;
        const char *e = s + strcspn(s, ".?!\n");
        if (*e == '?' && (strncmp(s, "Please ", 7) == 0 || strncmp(s, "I need ", 7) == 0))
            return vat_xasprintf("a request ending in a question mark: \"%.*s\"",
                                 (int)(e - s + 1), s);
        s = *e ? e + 1 : e;
    }
    return NULL;
}

static void test_proofread(void **state)
{
    struct corpus *c = *state;
    assert_true(c->n >= 2000);
    for (size_t i = 0; i < c->n; i++) {
        char *slip = proofread(c->d[i].wording);
        if (slip) {
            char why[256];
            snprintf(why, sizeof why, "%s", slip);
            free(slip);
            VAT_RULE(false, c->d[i].tmpl, "proofread",
                     "rewrite the grammar text the slip comes from (the template's lists, or "
                     "the shared parts in templates/prompt.c)",
                     "%s (%s): %s in:\n%s", c->d[i].id,
                     c->d[i].natural ? "natural" : "explicit", why, c->d[i].wording);
        }
    }
    print_message("  %zu prompts proofread\n", c->n);
}

/* The proofreader itself catches what it is for. */
static void test_proofreader_catches(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "This is the product reviews from our shop.", "Here is our support tickets, one per row.",
        "I exported an export of orders.", "Reply with the the total.", "It is a order.",
        "It is an ticket.", "Here 'settled' mean paid.", "Please write the query?",
        "Pick [[a|b]] one.", "Question: Question: what is the total?", NULL,
    };
    for (const char *const *b = bad; *b; b++) {
        char *slip = proofread(*b);
        if (!slip)
            fail_msg("the proofreader misses the slip in \"%s\"", *b);
        free(slip);
    }
    static const char *const good[] = {
        "This is an export of orders.", "Here are our support tickets, one per row.",
        "The answer is the total of the orders.", "It is an order, a user and an hour.",
        "This is the orders table.", "Could you write the query?",
        "Here 'collected' or 'paid' mean paid.", "Here 'settled' means paid.",
        "Question: what is the total?", NULL,
    };
    for (const char *const *g = good; *g; g++) {
        char *slip = proofread(*g);
        if (slip) {
            char why[256];
            snprintf(why, sizeof why, "%s", slip);
            free(slip);
            fail_msg("the proofreader flags \"%s\": %s", *g, why);
        }
    }
}

/* ---- realisations ---------------------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_realisations(void **state)
{
    struct corpus *c = *state;
    const struct vat_template *tm;
    for (size_t k = 0; (tm = vat_tt_each(k)); k++) {
        if (!tm->giveaways)
            continue;
        for (int style = 0; style < 2; style++) {
            char *rec[PER_STYLE];
            size_t n = 0;
            for (size_t i = 0; i < c->n && n < PER_STYLE; i++)
                if (c->d[i].tmpl == tm && c->d[i].natural == (style == 1)) {
                    if (strchr(c->d[i].phrasing, '+'))
                        fail_msg("%s: the phrasing record overflowed: %s", c->d[i].id,
                                 c->d[i].phrasing);
                    rec[n++] = c->d[i].phrasing;
                }
            qsort(rec, n, sizeof *rec, cmp_str);
            size_t distinct = n ? 1 : 0;
            for (size_t i = 1; i < n; i++)
                distinct += strcmp(rec[i], rec[i - 1]) != 0;
            VAT_RULE(distinct >= MIN_REALISATIONS, tm, "varied realisations",
                     "put a choice [[a|b]] every few words into the template's long fixed "
                     "text, and more alternatives into its question",
                     "%zu distinct %s realisations over %zu tasks (at least %d)", distinct,
                     style ? "natural" : "explicit", n, MIN_REALISATIONS);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_proofreader_catches),
        cmocka_unit_test(test_params_stated),
        cmocka_unit_test(test_no_defect_described),
        cmocka_unit_test(test_proofread),
        cmocka_unit_test(test_realisations),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
