/* prompt.c — prompt styles and the phrasing grammar (see prompt.h). */
#include "prompt.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "template.h"
#include "values.h"

bool vat_prompt_natural(const struct vat_task *t)
{
    return t->prompt_style && strcmp(t->prompt_style, VAT_STYLE_NATURAL) == 0 && t->tmpl &&
           t->tmpl->giveaways;
}

const char *vat_prompt_style_of(const struct vat_task *t)
{
    return vat_prompt_natural(t) ? VAT_STYLE_NATURAL : VAT_STYLE_EXPLICIT;
}

/* ---- the record of what was drawn ---------------------------------------- */

/* Appends c to t->phrasing.  The record is for counting distinct wordings;
 * one that would overflow ends in '+' (tests/test_wording.c fails on it). */
static void record(struct vat_task *t, char c)
{
    size_t len = strlen(t->phrasing);
    if (len + 2 < sizeof t->phrasing)
        t->phrasing[len] = c, t->phrasing[len + 1] = 0;
    else
        t->phrasing[sizeof t->phrasing - 2] = '+';
}

static char index_char(uint32_t k)
{
    static const char digits[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    return k < sizeof digits - 1 ? digits[k] : '*';
}

/* Draws an index below n from t's prompt stream (none when n is 1, or
 * without a task: the first) and records it. */
static uint32_t draw_index(struct vat_task *t, uint32_t n)
{
    if (!t)
        return 0;
    /* A task built outside the pipeline has no prompt stream (a seeded
     * PCG32 stream's increment is odd): it takes the first phrasings. */
    bool seeded = t->prompt_rng.inc != 0;
    uint32_t k = n > 1 && seeded ? vat_rng_below(&t->prompt_rng, n) : 0;
    record(t, index_char(k));
    return k;
}

const char *vat_prompt_phrase(struct vat_task *t, char slot, const char *const *list, size_t n)
{
    record(t, slot);
    uint32_t k = draw_index(t, (uint32_t)n);
    return n ? list[k] : "";
}

/* ---- the grammar ----------------------------------------------------------- */

/* Markers left in the output for "{an}" / "{An}", resolved once the
 * following word is known. */
#define MARK_AN '\x01'
#define MARK_AN_CAP '\x02'
/* "{#pl}": the realised text is a plural noun phrase (the mark is
 * dropped; vat_prompt_data reads it). */
#define MARK_PL '\x03'

static const char *kv_get(const char *const *kv, const char *name, size_t n)
{
    for (size_t i = 0; kv && kv[i] && kv[i + 1]; i += 2)
        if (strlen(kv[i]) == n && strncmp(kv[i], name, n) == 0)
            return kv[i + 1];
    return NULL;
}

/* Whether the value of name is plural (prompt.h: "name#", else a number). */
static bool kv_plural(const char *const *kv, const char *name, size_t n)
{
    char key[64];
    if (n + 2 <= sizeof key) {
        memcpy(key, name, n);
        key[n] = '#';
        key[n + 1] = 0;
        const char *num = kv_get(kv, key, n + 1);
        if (num)
            return strcmp(num, "pl") == 0;
    }
    const char *v = kv_get(kv, name, n);
    if (!v || !*v)
        return false;
    for (const char *p = v; *p; p++)
        if (!isdigit((unsigned char)*p))
            return false;
    return strcmp(v, "1") != 0;
}

/* The end of the choice opened at p ("[["): the position of its "]]", or
 * NULL when it is not closed. */
static const char *choice_end(const char *p, const char *end)
{
    int depth = 0;
    for (const char *q = p; q + 1 < end; q++) {
        if (q[0] == '[' && q[1] == '[') {
            depth++;
            q++;
        } else if (q[0] == ']' && q[1] == ']') {
            if (--depth == 0)
                return q;
            q++;
        }
    }
    return NULL;
}

static void realise(struct vat_buf *b, struct vat_task *t, const char *p, const char *end,
                    const char *const *kv);

/* Realises the choice between open ("[[") and close ("]]"). */
static void realise_choice(struct vat_buf *b, struct vat_task *t, const char *open,
                           const char *close, const char *const *kv)
{
    const char *alt[64];
    size_t n = 0;
    int depth = 0;
    alt[n++] = open + 2;
    for (const char *q = open + 2; q < close; q++) {
        if (q[0] == '[' && q[1] == '[') {
            depth++;
            q++;
        } else if (q[0] == ']' && q[1] == ']') {
            depth--;
            q++;
        } else if (q[0] == '|' && depth == 0 && n < 64) {
            alt[n++] = q + 1;
        }
    }
    uint32_t k = draw_index(t, (uint32_t)n);
    const char *a = alt[k], *z = k + 1 < n ? alt[k + 1] - 1 : close;
    realise(b, t, a, z, kv);
}

/* Realises the placeholder between open ('{') and close ('}'); false when
 * it is not one (the text is then copied). */
static bool realise_slot(struct vat_buf *b, const char *open, const char *close,
                         const char *const *kv)
{
    const char *s = open + 1;
    size_t n = (size_t)(close - s);
    if (n == 2 && strncmp(s, "an", 2) == 0) {
        vat_buf_putc(b, MARK_AN);
        return true;
    }
    if (n == 2 && strncmp(s, "An", 2) == 0) {
        vat_buf_putc(b, MARK_AN_CAP);
        return true;
    }
    if (n == 3 && strncmp(s, "#pl", 3) == 0) {
        vat_buf_putc(b, MARK_PL);
        return true;
    }
    bool cap = n > 0 && *s == '^';
    if (cap)
        s++, n--;
    const char *q = memchr(s, '?', n);
    if (q) {
        const char *bar = memchr(q, '|', (size_t)(close - q));
        if (!bar || !kv_get(kv, s, (size_t)(q - s)))
            return false;
        if (kv_plural(kv, s, (size_t)(q - s)))
            vat_buf_putn(b, bar + 1, (size_t)(close - bar - 1));
        else
            vat_buf_putn(b, q + 1, (size_t)(bar - q - 1));
        return true;
    }
    const char *v = kv_get(kv, s, n);
    if (!v)
        return false;
    if (cap && *v) {
        vat_buf_putc(b, (char)toupper((unsigned char)*v));
        vat_buf_puts(b, v + 1);
    } else {
        vat_buf_puts(b, v);
    }
    return true;
}

static void realise(struct vat_buf *b, struct vat_task *t, const char *p, const char *end,
                    const char *const *kv)
{
    while (p < end) {
        if (p + 1 < end && p[0] == '[' && p[1] == '[') {
            const char *close = choice_end(p, end);
            if (close) {
                realise_choice(b, t, p, close, kv);
                p = close + 2;
                continue;
            }
        }
        if (*p == '{') {
            const char *close = memchr(p, '}', (size_t)(end - p));
            if (close && realise_slot(b, p, close, kv)) {
                p = close + 1;
                continue;
            }
        }
        vat_buf_putc(b, *p++);
    }
}

/* Whether the word at w is said with "an": a vowel sound.  Lower-case
 * words by their first letters, acronyms by the name of their first letter
 * ("an SQL query", "an HTTP call", "a CSV file"), numbers by how they are
 * read ("an 8", "an 11", "an 18"). */
static bool takes_an(const char *w)
{
    static const char *const a_before[] = {"one", "once", "uni", "use", "usu", "uti", "ure",
                                           "eu",  "ewe", "ur",  "uk",  "us-", NULL};
    static const char *const an_before[] = {"hour", "honest", "heir", "honour", NULL};
    if (isdigit((unsigned char)w[0])) {
        /* eight, eleven, eighteen (and their thousands) */
        size_t n = strspn(w, "0123456789");
        bool teen = w[0] == '1' && (w[1] == '1' || w[1] == '8') && (n == 2 || n == 5);
        return w[0] == '8' || teen;
    }
    size_t caps = 0;
    while (isupper((unsigned char)w[caps]))
        caps++;
    if (caps >= 2 || (caps == 1 && !isalpha((unsigned char)w[1])))
        return strchr("AEFHILMNORSX", w[0]) != NULL;
    char low[8] = {0};
    for (size_t i = 0; i < sizeof low - 1 && w[i]; i++)
        low[i] = (char)tolower((unsigned char)w[i]);
    for (size_t i = 0; a_before[i]; i++)
        if (strncmp(low, a_before[i], strlen(a_before[i])) == 0)
            return false;
    for (size_t i = 0; an_before[i]; i++)
        if (strncmp(low, an_before[i], strlen(an_before[i])) == 0)
            return true;
    return strchr("aeiou", low[0]) != NULL && low[0] != 0;
}

/* Replaces the article markers written from offset `from` on and drops
 * the plural marks; returns whether there was one. */
static bool resolve_articles(struct vat_buf *b, size_t from)
{
    if (!memchr(b->data + from, MARK_AN, b->len - from) &&
        !memchr(b->data + from, MARK_AN_CAP, b->len - from) &&
        !memchr(b->data + from, MARK_PL, b->len - from))
        return false;
    char *tail = vat_xstrndup(b->data + from, b->len - from);
    b->len = from;
    b->data[from] = 0;
    bool plural = false;
    for (const char *p = tail; *p; p++) {
        if (*p == MARK_PL) {
            plural = true;
            continue;
        }
        if (*p != MARK_AN && *p != MARK_AN_CAP) {
            vat_buf_putc(b, *p);
            continue;
        }
        const char *w = p + 1;
        while (*w == ' ' || *w == '`' || *w == '"' || *w == '\'' || *w == '(' || *w == '*')
            w++;
        bool an = takes_an(w);
        vat_buf_puts(b, *p == MARK_AN_CAP ? (an ? "An" : "A") : (an ? "an" : "a"));
    }
    free(tail);
    return plural;
}

/* vat_prompt_say, returning whether the text marked itself plural. */
static bool say_np(struct vat_buf *b, struct vat_task *t, char slot, const char *text,
                   const char *const *kv)
{
    if (t)
        record(t, slot);
    size_t from = b->len;
    vat_buf_puts(b, "");
    realise(b, t, text, text + strlen(text), kv);
    return resolve_articles(b, from);
}

void vat_prompt_say(struct vat_buf *b, struct vat_task *t, char slot, const char *text,
                    const char *const *kv)
{
    say_np(b, t, slot, text, kv);
}

char *vat_prompt_text(struct vat_task *t, char slot, const char *text, const char *const *kv)
{
    struct vat_buf b = VAT_BUF_INIT;
    say_np(&b, t, slot, text, kv);
    return vat_buf_detach(&b);
}

void vat_prompt_put(struct vat_buf *b, struct vat_task *t, char slot, const char *const *list,
                    size_t n, const char *const *kv)
{
    const char *text = vat_prompt_phrase(t, slot, list, n);
    size_t from = b->len;
    vat_buf_puts(b, "");
    realise(b, t, text, text + strlen(text), kv);
    resolve_articles(b, from);
}

void vat_prompt_fill(struct vat_buf *b, const char *text, const char *const *kv)
{
    size_t from = b->len;
    vat_buf_puts(b, "");
    realise(b, NULL, text, text + strlen(text), kv);
    resolve_articles(b, from);
}

const char *vat_prompt_state(struct vat_task *t, const char *param)
{
    const struct vat_convention *c = t->tmpl ? t->tmpl->conventions : NULL;
    for (; c && c->param; c++)
        if (strcmp(c->param, param) == 0) {
            size_t n = 0;
            while (c->states[n])
                n++;
            return vat_prompt_phrase(t, 'c', c->states, n);
        }
    return "";
}

/* ---- the shared parts ------------------------------------------------------ */

static const char *kv_or_empty(const char *const *kv, const char *name);

static const char open_natural[] =
    "[[||Hi! |Hello! |Hi there. |Morning! |Quick question. |Quick one for you. "
    "|Could you help me with something? |I have a question about {topic}. "
    "|I'm [[looking at|going through|working on]] {topic}[[ this week|| today]]. "
    "|[[We're|I'm]] [[reviewing|checking|tidying up]] {topic}[[ before month end|| for a "
    "report]]. |A question about {topic}. |Hope you're well. |Got a minute? "
    "|Something for you on {topic}. |[[My manager|The team|Finance]] asked me about "
    "{topic}. ]]";
static const char open_explicit[] =
    "[[||The task is about {topic}. |This question is about {topic}. "
    "|Read the data description, then the question. |A data question about {topic}. "
    "|Below: a data set, a question about it and the form of the answer. "
    "|[[Context|Topic]]: {topic}. |The following concerns {topic}. "
    "|One question on {topic} follows. |Task on {topic}: read the data, then answer. ]]";

void vat_prompt_open(struct vat_buf *b, struct vat_task *t, const char *const *kv)
{
    /* The topic is the template's grammar: realised first, then used. */
    struct vat_buf topic = VAT_BUF_INIT;
    vat_prompt_say(&topic, t, 'o', kv_or_empty(kv, "topic"), kv);
    const char *okv[] = {"topic", topic.data, NULL};
    vat_prompt_say(b, t, 'o', vat_prompt_natural(t) ? open_natural : open_explicit, okv);
    vat_buf_release(&topic);
}

static const char *const data_explicit[] = {
    "You are given {what}, [[one {unit} per row|one row per {unit}]], with the columns {cols}.",
    "The file below {what?is|holds} {what} ([[one {unit} per row|a row for each {unit}]]); "
    "its columns are {cols}.",
    "Below {what?is|are} {what}, one {unit} per row. [[Columns|The columns]]: {cols}.",
    "The data {what?is|consists of} {what}: each row is one {unit}, with the columns {cols}.",
    "{^what} {what?is|are} given below, [[one row per {unit}|each row one {unit}]]. "
    "[[It has the columns|The columns are]] {cols}.",
    "The data set {what?is|holds} {what}. [[Every|Each]] row is a single {unit}; the columns "
    "are {cols}.",
    "Consider {what}, [[with one row for each {unit}|one {unit} to a row]] and the columns "
    "{cols}.",
    "The table below holds {what}, one {unit} per row, in the columns {cols}.",
};
static const char *const data_natural[] = {
    "Here {what?is|are} {what}, [[one {unit} per row|a row per {unit}|one row for each "
    "{unit}]][[: |, with ]]{cols}.",
    "Attached {what?is|are} {what} ([[one {unit} per row|a row per {unit}]]) with {cols}.",
    "{^what} {what?is|are} below; every row is one {unit}, and the columns are {cols}.",
    "I've [[pulled|copied|put]] {what} [[below|in here|into this message]], one {unit} per "
    "row, with {cols}.",
    "Below you'll find {what}. Each row is one {unit}; [[the columns are|it has]] {cols}.",
    "The file below holds {what}, [[a row per {unit}|one {unit} to a row]], with the columns "
    "{cols}.",
    "{^what} {what?is|are} in the file below, one row for each {unit}: {cols}.",
    "[[I'm sharing|Sharing]] {what}: one {unit} per row, [[columns|with]] {cols}.",
};

/* The value of name in kv, or "". */
static const char *kv_or_empty(const char *const *kv, const char *name)
{
    const char *v = kv_get(kv, name, strlen(name));
    return v ? v : "";
}

void vat_prompt_data(struct vat_buf *b, struct vat_task *t, const char *const *kv)
{
    /* "what" and "cols" are the template's grammar: realised first (their
     * placeholders from the same kv), then framed. */
    struct vat_buf what = VAT_BUF_INIT, cols = VAT_BUF_INIT;
    bool plural = say_np(&what, t, 'w', kv_or_empty(kv, "what"), kv);
    vat_prompt_say(&cols, t, 'k', kv_or_empty(kv, "cols"), kv);
    const char *number = plural ? "pl" : kv_or_empty(kv, "what#");
    const char *fkv[] = {"what", what.data, "what#", number,
                         "unit", kv_or_empty(kv, "unit"), "cols", cols.data, NULL};
    if (vat_prompt_natural(t))
        VAT_PROMPT_PUT(b, t, 'd', data_natural, fkv);
    else
        VAT_PROMPT_PUT(b, t, 'd', data_explicit, fkv);
    vat_buf_release(&what);
    vat_buf_release(&cols);
}

void vat_prompt_cols(struct vat_buf *b, struct vat_task *t, const struct vat_prompt_col *cols,
                     size_t n, const char *const *kv)
{
    record(t, 'k');
    bool gloss = draw_index(t, 2) == 1;
    size_t from = b->len;
    /* what each column holds, realised first (one may realise empty) */
    char **about = vat_xcalloc(n ? n : 1, sizeof *about);
    size_t described = 0;
    for (size_t i = 0; i < n; i++) {
        struct vat_buf a = VAT_BUF_INIT;
        vat_buf_puts(&a, "");
        if (cols[i].about)
            realise(&a, t, cols[i].about, cols[i].about + strlen(cols[i].about), kv);
        about[i] = vat_buf_detach(&a);
        described += about[i][0] != 0;
    }
    for (size_t i = 0; i < n; i++) {
        vat_buf_printf(b, "%s`%s`", i == 0 ? "" : i + 1 == n ? " and " : ", ", cols[i].name);
        if (!gloss && about[i][0])
            vat_buf_printf(b, " (%s)", about[i]);
    }
    if (gloss && described) {
        vat_buf_puts(b, " (");
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (about[i][0])
                vat_buf_printf(b, "%s`%s`: %s", k++ ? "; " : "", cols[i].name, about[i]);
        vat_buf_putc(b, ')');
    }
    for (size_t i = 0; i < n; i++)
        free(about[i]);
    free(about);
    resolve_articles(b, from);
}

static const char *const answer_explicit[] = {
    "Answer with one JSON value: {shape}.",
    "Reply with exactly one JSON value: {shape}.",
    "Give the answer as one JSON value: {shape}.",
    "Your answer must be one JSON value, {shape}.",
    "The answer is a single JSON value: {shape}.",
    "Respond with a single JSON value, {shape}.",
    "Write the answer as one JSON value: {shape}.",
    "Return one JSON value and nothing else: {shape}.",
};
static const char *const answer_natural[] = {
    "Reply with {shape}.",
    "Please answer in JSON: {shape}.",
    "Send back just {shape} as your answer.",
    "The answer should be {shape}, nothing else.",
    "Could you answer with {shape}?",
    "In your reply I only need {shape}.",
    "What I need back is {shape}; that is the whole answer.",
    "Please reply with {shape} and nothing more.",
};

void vat_prompt_answer(struct vat_buf *b, struct vat_task *t, const char *shape)
{
    /* The shape is grammar: realise it first, then frame it. */
    struct vat_buf s = VAT_BUF_INIT;
    vat_prompt_say(&s, t, 's', shape, NULL);
    const char *kv[] = {"shape", s.data, NULL};
    if (vat_prompt_natural(t))
        VAT_PROMPT_PUT(b, t, 'a', answer_natural, kv);
    else
        VAT_PROMPT_PUT(b, t, 'a', answer_explicit, kv);
    vat_buf_release(&s);
}

/* x in short form ("1e-6", "0.001", "0"). */
static char *fmt_tol(double x, char out[32])
{
    snprintf(out, 32, "%g", x);
    char *p = strstr(out, "e-0");
    if (!p)
        p = strstr(out, "e+0");
    if (p)
        memmove(p + 2, p + 3, strlen(p + 3) + 1);
    return out;
}

static const char *const tolerance_text[] = {
    "Numbers are compared with an absolute tolerance of {abs} and a relative tolerance of "
    "{rel}.",
    "[[The check|The checker]] accepts a number within a relative tolerance of {rel} or an "
    "absolute tolerance of {abs}.",
    "[[Numbers match when they agree|A number matches when it agrees]] within an absolute "
    "tolerance of {abs} or a relative tolerance of {rel}.",
    "[[Each|Every]] number [[is compared|is checked]] with a relative tolerance of {rel} and "
    "an absolute tolerance of {abs}.",
    "Comparison of numbers: absolute tolerance of {abs}, relative tolerance of {rel}.",
    "[[Tolerances|For numbers]]: a relative tolerance of {rel}, an absolute tolerance of "
    "{abs}, whichever is larger.",
};

void vat_prompt_tolerance(struct vat_buf *b, struct vat_task *t, double rel_tol, double abs_tol)
{
    char a[32], r[32];
    const char *kv[] = {"abs", fmt_tol(abs_tol, a), "rel", fmt_tol(rel_tol, r), NULL};
    VAT_PROMPT_PUT(b, t, 't', tolerance_text, kv);
}

void vat_prompt_human_date(int32_t day, char out[32])
{
    static const char *const months[] = {"January", "February", "March",     "April",
                                         "May",     "June",     "July",      "August",
                                         "September", "October", "November", "December"};
    char iso[11];
    vat_fmt_date(day, iso);
    int y = (int)strtol(iso, NULL, 10), m = (int)strtol(iso + 5, NULL, 10),
        d = (int)strtol(iso + 8, NULL, 10);
    snprintf(out, 32, "%d %s %d", d, months[(m + 11) % 12], y);
}
