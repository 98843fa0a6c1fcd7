/* prompt.h — prompt styles and varied wording.
 *
 * A task's prompt is written in one of two styles: "explicit" (the question
 * spells out every rule, the trap included) and "natural" (the question as
 * a colleague or client would ask it, in domain words, its meaning fixed by
 * convention and by the data description, never naming the mistake).  The
 * pipeline picks the style and seeds t->prompt_rng from the task's "prompt"
 * sub-stream before generate() runs, so neither the style nor any phrasing
 * draw moves a fixture draw: the same task in either style has the same
 * fixture, gold and trap.
 *
 * A template keeps, per style, lists of interchangeable phrasings (at least
 * four each) for its question, its data description and its answer-format
 * sentence; vat_prompt_phrase draws one and records which in t->phrasing.
 * Phrasings are text with {name} placeholders filled from a NULL-ended
 * list of name/value pairs, so phrasings may order their facts freely.
 * Exports the vat_prompt_* functions. */
#ifndef VAT_PROMPT_H
#define VAT_PROMPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "task.h"
#include "vat.h"

#define VAT_STYLE_EXPLICIT "explicit"
#define VAT_STYLE_NATURAL "natural"

/* True when t is to be written in the natural style. */
bool vat_prompt_natural(const struct vat_task *t);

/* Draws one of list[0..n-1] from t->prompt_rng and appends slot (one
 * letter: 'q' question, 'd' data, 'a' answer format, ...) and the index to
 * t->phrasing.  Returns the phrasing (list[0] when n is 1). */
const char *vat_prompt_phrase(struct vat_task *t, char slot, const char *const *list, size_t n);
#define VAT_PROMPT_PHRASE(t, slot, arr) \
    vat_prompt_phrase((t), (slot), (arr), sizeof(arr) / sizeof((arr)[0]))

/* Appends text to b with every "{name}" replaced by its value from kv
 * (name0, value0, name1, value1, ..., NULL).  An unknown name is copied as
 * it stands, so a test that looks for '{' finds it. */
void vat_prompt_fill(struct vat_buf *b, const char *text, const char *const *kv);

/* vat_prompt_phrase then vat_prompt_fill in one step. */
void vat_prompt_put(struct vat_buf *b, struct vat_task *t, char slot, const char *const *list,
                    size_t n, const char *const *kv);
#define VAT_PROMPT_PUT(b, t, slot, arr, kv) \
    vat_prompt_put((b), (t), (slot), (arr), sizeof(arr) / sizeof((arr)[0]), (kv))

/* The framings every template shares, each drawn from >= 4 phrasings of
 * the task's style (slots 'd', 'a'):
 *   vat_prompt_data:   "You are given <what>, one <unit> per row, with the
 *                      columns <cols>." and its variants (natural: "Here is
 *                      <what>, ...");
 *   vat_prompt_answer: explicit: "Answer with one JSON value: <shape>." and
 *                      its variants; natural: "Reply with <shape>." and its
 *                      variants.  shape is a noun phrase ("an object whose
 *                      keys are ...").  No full stop at the end of the
 *                      arguments: the framing adds it. */
void vat_prompt_data(struct vat_buf *b, struct vat_task *t, const char *what, const char *unit,
                     const char *cols);
/* (The question itself is each template's own: four phrasings per style
 * that differ in how they ask, not only in a lead-in, drawn as slot 'q'
 * with VAT_PROMPT_PUT.) */
void vat_prompt_answer(struct vat_buf *b, struct vat_task *t, const char *shape);

/* "3 March 2024" for a day number (days since 1970-01-01), as people
 * write a date in a question; out holds 32 bytes. */
void vat_prompt_human_date(int32_t day, char out[32]);

/* The style a task records: "natural" only when it was asked for and the
 * template writes natural prompts (it declares giveaways). */
const char *vat_prompt_style_of(const struct vat_task *t);

#endif
