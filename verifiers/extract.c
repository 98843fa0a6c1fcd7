/* extract.c — the answer extraction policy of docs/extraction.md.
 *
 * The completion is untrusted and may be 4 MiB of anything, so every rule is
 * one forward pass that never looks back more than a tag's length: think
 * blocks are found by skipping to the next '<', lines by skipping to the next
 * '\n', and each pass records only the LAST candidate of its kind.  Nothing
 * is copied or allocated; the answer is a slice of the completion.
 *
 * Think blocks split the completion into visible stretches.  The other rules
 * look inside one stretch at a time and never across a think block, because a
 * slice cannot skip the text in between (docs/extraction.md explains why this
 * is also what a reader would expect). */
#include "extract.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define NONE SIZE_MAX

static unsigned char lower(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') ? (unsigned char)(c - 'A' + 'a') : c;
}

/* 1 when the lowercase ASCII word w (of length wl) starts at s[i], within
 * s[..end), compared case-insensitively. */
static bool word_at(const char *s, size_t i, size_t end, const char *w, size_t wl)
{
    if (i > end || end - i < wl)
        return false;
    for (size_t k = 0; k < wl; k++)
        if (lower((unsigned char)s[i + k]) != (unsigned char)w[k])
            return false;
    return true;
}

#define LIT(w) w, (sizeof w - 1)

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* ---- think blocks -------------------------------------------------------- */

/* Walks the visible stretches of a completion, in order.  A "<think>" opens a
 * block closed by the next "</think>" (blocks do not nest: an inner "<think>"
 * is thought like any other text); a block never closed runs to the end.  A
 * "</think>" that closes no block ends a block that began where the visible
 * text began (the start of the completion, or the end of the previous block):
 * chat templates that put "<think>" into the prompt produce exactly that. */
struct stretches {
    const char *s;
    size_t n;
    size_t pos;
    bool done;
};

/* Position of the next "</think>" at or after i, or NONE. */
static size_t find_think_close(const char *s, size_t n, size_t i)
{
    while (i < n) {
        const char *lt = memchr(s + i, '<', n - i);
        if (!lt)
            return NONE;
        i = (size_t)(lt - s);
        if (word_at(s, i, n, LIT("</think>")))
            return i;
        i++;
    }
    return NONE;
}

static bool next_stretch(struct stretches *it, size_t *b, size_t *e)
{
    if (it->done)
        return false;
    const char *s = it->s;
    size_t n = it->n, start = it->pos, i = it->pos;
    while (i < n) {
        const char *lt = memchr(s + i, '<', n - i);
        if (!lt)
            break;
        i = (size_t)(lt - s);
        if (word_at(s, i, n, LIT("</think>"))) {
            /* A close with no open: what came before it was thought. */
            start = i + 8;
            i = start;
            continue;
        }
        if (word_at(s, i, n, LIT("<think>"))) {
            *b = start;
            *e = i;
            size_t close = find_think_close(s, n, i + 7);
            if (close == NONE) {
                it->done = true; /* unclosed: thought to the end */
            } else {
                it->pos = close + 8;
            }
            return true;
        }
        i++;
    }
    *b = start;
    *e = n;
    it->done = true;
    return true;
}

/* ---- fences ----------------------------------------------------------------- */

/* Info-string words that fit each answer kind ("" is a fence without one). */
static bool info_fits(const char *kind, const char *w, size_t wl)
{
    static const char *const value_fit[] = {"", "json", "text", NULL};
    static const char *const regex_fit[] = {"", "regex", "re", "text", NULL};
    static const char *const sql_fit[] = {"", "sql", "sqlite", "text", NULL};
    static const char *const other_fit[] = {"", "text", NULL};
    const char *const *fit = other_fit;
    if (kind && (strcmp(kind, "value") == 0 || strcmp(kind, "abstain") == 0))
        fit = value_fit;
    else if (kind && strcmp(kind, "regex") == 0)
        fit = regex_fit;
    else if (kind && strcmp(kind, "sql") == 0)
        fit = sql_fit;
    for (size_t k = 0; fit[k]; k++)
        if (strlen(fit[k]) == wl && word_at(w, 0, wl, fit[k], wl))
            return true;
    return false;
}

/* The fence run of line [ls, le): at most three spaces of indent, then three
 * or more '`' or '~' (CommonMark).  Returns the run's length (0 when the line
 * is no fence) and sets *ch and *after (the first byte after the run). */
static size_t fence_run(const char *s, size_t ls, size_t le, char *ch, size_t *after)
{
    size_t i = ls;
    while (i < le && i - ls < 3 && s[i] == ' ')
        i++;
    if (i >= le || (s[i] != '`' && s[i] != '~'))
        return 0;
    char c = s[i];
    size_t j = i;
    while (j < le && s[j] == c)
        j++;
    if (j - i < 3)
        return 0;
    *ch = c;
    *after = j;
    return j - i;
}

/* An opening fence: the run, then an info string (a backtick fence's may not
 * hold a backtick).  Sets the fence's char and length and whether its info
 * string's first word fits the answer kind. */
static bool fence_open(const char *s, size_t ls, size_t le, const char *kind, char *ch,
                       size_t *flen, bool *fits)
{
    size_t after;
    size_t run = fence_run(s, ls, le, ch, &after);
    if (run == 0)
        return false;
    if (*ch == '`' && memchr(s + after, '`', le - after))
        return false; /* inline code such as ```42```, not a fence */
    size_t w = after;
    while (w < le && (s[w] == ' ' || s[w] == '\t'))
        w++;
    size_t we = w;
    while (we < le && !is_space(s[we]))
        we++;
    *flen = run;
    *fits = info_fits(kind, s + w, we - w);
    return true;
}

/* A closing fence: the same char, at least as long, then only blanks. */
static bool fence_close(const char *s, size_t ls, size_t le, char ch, size_t flen)
{
    char c;
    size_t after;
    size_t run = fence_run(s, ls, le, &c, &after);
    if (run == 0 || c != ch || run < flen)
        return false;
    for (size_t i = after; i < le; i++)
        if (!is_space(s[i]))
            return false;
    return true;
}

/* ---- answer lines ------------------------------------------------------------ */

/* Line [ls, le) starts (after blanks) with "Answer:" or "Final answer:" in
 * any case; returns the position after the colon, or NONE. */
static size_t answer_line(const char *s, size_t ls, size_t le)
{
    size_t i = ls;
    while (i < le && (s[i] == ' ' || s[i] == '\t'))
        i++;
    if (word_at(s, i, le, LIT("final"))) {
        size_t j = i + 5;
        if (j >= le || (s[j] != ' ' && s[j] != '\t'))
            return NONE;
        while (j < le && (s[j] == ' ' || s[j] == '\t'))
            j++;
        i = j;
    }
    if (word_at(s, i, le, LIT("answer:")))
        return i + 7;
    return NONE;
}

/* ---- the policy -------------------------------------------------------------- */

struct slice {
    size_t b, e; /* b == NONE: none found */
};

struct found {
    struct slice tag, fit_fence, any_fence, line, whole;
};

static void scan_tags(const char *s, size_t b, size_t e, struct found *f)
{
    size_t open = NONE, i = b;
    while (i < e) {
        const char *lt = memchr(s + i, '<', e - i);
        if (!lt)
            break;
        i = (size_t)(lt - s);
        if (word_at(s, i, e, LIT("<answer>"))) {
            open = i + 8; /* tags do not nest: the latest opening wins */
            i += 8;
        } else if (word_at(s, i, e, LIT("</answer>"))) {
            if (open != NONE)
                f->tag = (struct slice){open, i};
            open = NONE;
            i += 9;
        } else {
            i++;
        }
    }
}

static void scan_lines(const char *s, size_t b, size_t e, const char *kind, struct found *f)
{
    bool in_fence = false, fits = false;
    char ch = 0;
    size_t flen = 0, content = 0, ls = b;
    for (;;) {
        const char *nl = memchr(s + ls, '\n', e - ls);
        size_t le = nl ? (size_t)(nl - s) : e;
        size_t next = nl ? le + 1 : e;
        if (in_fence) {
            if (fence_close(s, ls, le, ch, flen)) {
                struct slice block = {content, ls};
                f->any_fence = block;
                if (fits)
                    f->fit_fence = block;
                in_fence = false;
            }
        } else if (fence_open(s, ls, le, kind, &ch, &flen, &fits)) {
            in_fence = true;
            content = next;
        } else {
            size_t a = answer_line(s, ls, le);
            if (a != NONE)
                f->line = (struct slice){a, e};
        }
        if (!nl)
            break;
        ls = next;
    }
    if (in_fence) {
        /* Never closed: the block runs to the end of the stretch (CommonMark). */
        struct slice block = {content, e};
        f->any_fence = block;
        if (fits)
            f->fit_fence = block;
    }
}

int vat_extract(const char *answer_kind, const char *completion, size_t len, int mode,
                struct vat_extraction *out)
{
    if (!completion) {
        completion = "";
        len = 0;
    }
    out->text = completion;
    out->len = 0;
    out->rule = mode == VAT_EXTRACT_RAW ? "raw" : "whole";
    if (len > VAT_MAX_COMPLETION_BYTES)
        return -1;
    if (mode == VAT_EXTRACT_RAW) {
        out->len = len;
        return 0;
    }

    struct found f = {{NONE, NONE}, {NONE, NONE}, {NONE, NONE}, {NONE, NONE}, {NONE, NONE}};
    struct stretches it = {completion, len, 0, false};
    size_t b, e;
    while (next_stretch(&it, &b, &e)) {
        scan_tags(completion, b, e, &f);
        scan_lines(completion, b, e, answer_kind, &f);
        for (size_t i = b; i < e; i++)
            if (!is_space(completion[i])) {
                f.whole = (struct slice){b, e}; /* the last stretch not blank */
                break;
            }
    }

    struct slice pick = {len, len};
    const char *rule = "whole";
    if (f.tag.b != NONE) {
        pick = f.tag;
        rule = "answer_tag";
    } else if (f.fit_fence.b != NONE) {
        pick = f.fit_fence;
        rule = "fence";
    } else if (f.any_fence.b != NONE) {
        pick = f.any_fence;
        rule = "fence";
    } else if (f.line.b != NONE) {
        pick = f.line;
        rule = "answer_line";
    } else if (f.whole.b != NONE) {
        pick = f.whole;
    }
    while (pick.b < pick.e && is_space(completion[pick.b]))
        pick.b++;
    while (pick.e > pick.b && is_space(completion[pick.e - 1]))
        pick.e--;
    out->text = completion + pick.b;
    out->len = pick.e - pick.b;
    out->rule = rule;
    return 0;
}
