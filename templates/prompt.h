/* prompt.h — prompt styles and the phrasing grammar prompts are realised
 * from.
 *
 * A task's prompt is written in one of two styles: "explicit" (the question
 * spells out every rule, the trap included) and "natural" (the question as
 * a colleague or client would ask it: the business question, the data's
 * facts and the output convention in domain words, never the data's defect
 * nor the mistake).  The pipeline picks the style and seeds t->prompt_rng
 * from the task's "prompt" sub-stream before generate() runs, so neither
 * the style nor any phrasing draw moves a fixture draw: the same task in
 * either style has the same fixture, gold and trap.
 *
 * Prompts are realised from a small grammar (vat_prompt_say): a text holds
 * choices between alternatives, placeholders filled from a NULL-ended list
 * of name/value pairs, number agreement and a/an articles.  Every choice is
 * drawn from t->prompt_rng, one draw per choice, and recorded in
 * t->phrasing: a slot letter for each realised text ('o' opening, 'd' data
 * description, 'q' question, 'c' convention, 'a' answer format, ...)
 * followed by one character per choice, the index drawn (0-9, then A-Z).
 * Two tasks with the same record have the same wording around their
 * values; `vat audit` counts the distinct records per template and style.
 *
 * The shared parts every template uses: an opening (vat_prompt_open), the
 * data description (vat_prompt_data), the answer format (vat_prompt_answer)
 * and, explicit only, the tolerance sentence (vat_prompt_tolerance).  The
 * question and the convention sentences are the template's own.
 * Exports the vat_prompt_* functions and struct vat_convention. */
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

/* The grammar of vat_prompt_say's text:
 *   [[a|b|c]]      one alternative, drawn; alternatives may be empty and
 *                  may nest further choices ("[[|Hi, ]]" is optional);
 *   {name}         the value of name in kv, verbatim (values are data:
 *                  they are never read as grammar);
 *   {^name}        the same with its first letter in upper case;
 *   {name?sg|pl}   sg when name is singular, pl when it is plural: the
 *                  entry "name#" of kv ("sg" or "pl") says, else a value
 *                  "1" is singular, another whole number plural, anything
 *                  else singular;
 *   {an}, {An}     "a" or "an" (capitalised), whichever the next word
 *                  takes ("an order", "a user", "an SQL query");
 *   {#pl}          nothing: marks the realised text a plural noun phrase
 *                  (vat_prompt_data's "what" agrees by it).
 * Anything else is copied as it stands: a "{x}" whose x is not in kv stays
 * (so a test looking for '{' finds it), and single brackets are text.
 * Appends slot to t->phrasing, then the index of every choice as drawn. */
void vat_prompt_say(struct vat_buf *b, struct vat_task *t, char slot, const char *text,
                    const char *const *kv);

/* vat_prompt_say into a new string. */
char *vat_prompt_text(struct vat_task *t, char slot, const char *text, const char *const *kv);

/* Draws one of list[0..n-1] (the first choice recorded under slot) and
 * realises it as vat_prompt_say does.  Returns nothing; see
 * vat_prompt_phrase for the bare pick. */
void vat_prompt_put(struct vat_buf *b, struct vat_task *t, char slot, const char *const *list,
                    size_t n, const char *const *kv);
#define VAT_PROMPT_PUT(b, t, slot, arr, kv) \
    vat_prompt_put((b), (t), (slot), (arr), sizeof(arr) / sizeof((arr)[0]), (kv))

/* Draws one of list[0..n-1] from t->prompt_rng and records slot and the
 * index in t->phrasing.  Returns the phrasing (list[0] when n is 1: no
 * draw). */
const char *vat_prompt_phrase(struct vat_task *t, char slot, const char *const *list, size_t n);
#define VAT_PROMPT_PHRASE(t, slot, arr) \
    vat_prompt_phrase((t), (slot), (arr), sizeof(arr) / sizeof((arr)[0]))

/* Appends text realised without a task: placeholders, agreement and
 * articles as vat_prompt_say, every choice its first alternative, nothing
 * drawn or recorded. */
void vat_prompt_fill(struct vat_buf *b, const char *text, const char *const *kv);

/* A natural opening, or nothing, drawn (slot 'o'): a greeting, a line of
 * context about kv's "topic" (a noun phrase in the grammar: "[[the support
 * queue|our helpdesk tickets]]"), or none.  Explicit prompts get a formal
 * lead-in or none.  Ends with a space when it writes anything, so the data
 * description follows on the same line. */
void vat_prompt_open(struct vat_buf *b, struct vat_task *t, const char *const *kv);

/* The data description (slot 'd'), in the task's style: kv holds "what"
 * (a noun phrase with its determiner: "our support tickets"), "what#"
 * ("pl" when it is plural), "unit" ("ticket": one row is one unit) and
 * "cols" (the columns as the template describes them).  "what" and "cols"
 * are grammar (slots 'w' and 'k'), their placeholders filled from the same
 * kv, so data (a column's values) comes in through placeholders.  A full
 * sentence or two, no trailing space. */
void vat_prompt_data(struct vat_buf *b, struct vat_task *t, const char *const *kv);

/* One column of a data description: its name and what it holds, a noun
 * phrase in the grammar ("the star rating, 1 to 5"; NULL or "" when
 * nothing is said about it). */
struct vat_prompt_col {
    const char *name;
    const char *about;
};

/* Appends the columns cols[0..n-1] as a data description lists them
 * (slot 'k'), in one of two layouts drawn: each column followed by what it
 * holds in parentheses ("`a` (x), `b` and `c` (z)"), or the names first and
 * a gloss of the described ones after them ("`a`, `b` and `c` (`a`: x;
 * `c`: z)").  The abouts are realised with kv (data comes in through
 * placeholders). */
void vat_prompt_cols(struct vat_buf *b, struct vat_task *t, const struct vat_prompt_col *cols,
                     size_t n, const char *const *kv);
#define VAT_PROMPT_COLS(b, t, arr, kv) \
    vat_prompt_cols((b), (t), (arr), sizeof(arr) / sizeof((arr)[0]), (kv))

/* The answer format (slot 'a'): shape is a noun phrase in the grammar
 * ("a JSON object from each team to its count, like {\"<team>\": <n>}")
 * and realised as such; no full stop at its end: the framing adds it.
 * Explicit: "Answer with one JSON value: <shape>." and its variants;
 * natural: "Reply with <shape>." and its variants. */
void vat_prompt_answer(struct vat_buf *b, struct vat_task *t, const char *shape);

/* Explicit style: "Numbers are compared with an absolute tolerance of A and
 * a relative tolerance of R." and its variants (slot 't'), tolerances in
 * short form, full stop included. */
void vat_prompt_tolerance(struct vat_buf *b, struct vat_task *t, double rel_tol, double abs_tol);

/* "3 March 2024" for a day number (days since 1970-01-01), as people
 * write a date in a question; out holds 32 bytes. */
void vat_prompt_human_date(int32_t day, char out[32]);

/* The style a task records: "natural" only when it was asked for and the
 * template writes natural prompts (it declares giveaways). */
const char *vat_prompt_style_of(const struct vat_task *t);

/* A convention that decides the answer, as a template declares it: the
 * key of t->params whose value changes the answer, and the phrases that
 * state it in domain words, ended by NULL.  Every natural prompt holds one
 * of them (tests/test_wording.c reads every template's table); the
 * template draws the one it writes with vat_prompt_state. */
struct vat_convention {
    const char *param;
    const char *const *states;
};

/* One of the statements of the convention for param in the template's
 * table (t->tmpl->conventions), drawn (slot 'c'); "" when the template
 * declares no such param (a test then fails: every convention a prompt
 * states is declared). */
const char *vat_prompt_state(struct vat_task *t, const char *param);

#endif
