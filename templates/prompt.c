/* prompt.c — prompt styles and varied wording (see prompt.h). */
#include "prompt.h"

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

const char *vat_prompt_phrase(struct vat_task *t, char slot, const char *const *list, size_t n)
{
    uint32_t k = n > 1 ? vat_rng_below(&t->prompt_rng, (uint32_t)n) : 0;
    size_t len = strlen(t->phrasing);
    /* The record is for counting distinct wordings; a template with more
     * slots than fit keeps the first ones, which still tell them apart. */
    if (len + 4 < sizeof t->phrasing)
        snprintf(t->phrasing + len, sizeof t->phrasing - len, "%c%u", slot, (unsigned)k);
    return n ? list[k] : "";
}

void vat_prompt_fill(struct vat_buf *b, const char *text, const char *const *kv)
{
    const char *p = text;
    while (*p) {
        const char *open = strchr(p, '{');
        if (!open) {
            vat_buf_puts(b, p);
            return;
        }
        vat_buf_putn(b, p, (size_t)(open - p));
        const char *close = strchr(open + 1, '}');
        const char *value = NULL;
        if (close) {
            size_t n = (size_t)(close - open - 1);
            for (size_t i = 0; kv && kv[i] && kv[i + 1]; i += 2)
                if (strlen(kv[i]) == n && strncmp(kv[i], open + 1, n) == 0) {
                    value = kv[i + 1];
                    break;
                }
        }
        if (value) {
            vat_buf_puts(b, value);
            p = close + 1;
        } else {
            vat_buf_putc(b, '{');
            p = open + 1;
        }
    }
}

void vat_prompt_put(struct vat_buf *b, struct vat_task *t, char slot, const char *const *list,
                    size_t n, const char *const *kv)
{
    vat_prompt_fill(b, vat_prompt_phrase(t, slot, list, n), kv);
}

static const char *const data_explicit[] = {
    "You are given {what}, one {unit} per row, with the columns {cols}.",
    "The file below is {what} (one {unit} per row); its columns are {cols}.",
    "Below is {what}, one {unit} per row. Columns: {cols}.",
    "The data is {what}: each row is one {unit}, with the columns {cols}.",
};
static const char *const data_natural[] = {
    "Here is {what}, one {unit} per row: {cols}.",
    "Attached is {what} (one {unit} per row) with {cols}.",
    "This is {what}; every row is one {unit}. It has {cols}.",
    "I exported {what} for you, one {unit} per row, with {cols}.",
};

void vat_prompt_data(struct vat_buf *b, struct vat_task *t, const char *what, const char *unit,
                     const char *cols)
{
    const char *kv[] = {"what", what, "unit", unit, "cols", cols, NULL};
    if (vat_prompt_natural(t))
        VAT_PROMPT_PUT(b, t, 'd', data_natural, kv);
    else
        VAT_PROMPT_PUT(b, t, 'd', data_explicit, kv);
}

static const char *const answer_explicit[] = {
    "Answer with one JSON value: {shape}.",
    "Reply with exactly one JSON value: {shape}.",
    "Give the answer as one JSON value: {shape}.",
    "Your answer must be one JSON value, {shape}.",
};
static const char *const answer_natural[] = {
    "Reply with {shape}.",
    "Please answer in JSON: {shape}.",
    "Send back just {shape}.",
    "The answer should be {shape}, nothing else.",
};

void vat_prompt_answer(struct vat_buf *b, struct vat_task *t, const char *shape)
{
    const char *kv[] = {"shape", shape, NULL};
    if (vat_prompt_natural(t))
        VAT_PROMPT_PUT(b, t, 'a', answer_natural, kv);
    else
        VAT_PROMPT_PUT(b, t, 'a', answer_explicit, kv);
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
