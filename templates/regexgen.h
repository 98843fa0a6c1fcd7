/* regexgen.h — shared machinery for the regex templates (dates, amounts,
 * order ids).  A regex task is a set of example lines shown in the prompt
 * and a set of held-out lines it never shows; every line is built piece by
 * piece, the template planting each target (text the pattern must extract)
 * and each decoy (text it must not), so the expected extraction list of
 * every line is known by construction: that planted truth is the second
 * derivation that confirm() compares with what the gold pattern extracts
 * from the fixture as written.
 *
 * The pieces, in the order a template uses them:
 *   - struct vat_rx_builder / struct vat_rx_set: lines under construction
 *     and finished lines with their expected lists;
 *   - vat_rx_plan: the slot kinds of a line set, with required kinds (the
 *     decoys that arm the trap) guaranteed and the rest drawn by weight;
 *   - vat_rx_expand: fills a frame ("{time} {level} {svc}: ... {slot}")
 *     with realistic filler tokens, calling the template for each {slot};
 *   - vat_rx_write_lines / vat_rx_read_lines: the line fixtures, CSV with
 *     columns line_id, text (examples <id>.csv, held-out <id>.heldout.csv);
 *   - vat_rx_spec_new / vat_rx_spec_cases / vat_rx_cases_agree: the regex
 *     checker spec, its "cases" computed by running the gold pattern over
 *     the lines read back, and the comparison with the planted truth;
 *   - vat_rx_prompt_examples / vat_rx_prompt_answer: the prompt sections
 *     every regex template shares;
 *   - vat_rx_choose_format, vat_rx_build_lines, vat_rx_lines_distinct and
 *     the vat_rx_task_* driver: the parts of generate, reference, confirm
 *     and trap_answer that every regex template shares, so a template file
 *     holds only its question (see "the regex task driver" below).
 *
 * Exports struct vat_rx_line, struct vat_rx_set, struct vat_rx_builder,
 * struct vat_rx_slot, struct vat_rx_layout, struct vat_rx_part, struct
 * vat_rx_draw, vat_rx_task_params[] and the vat_rx_* functions. */
#ifndef VAT_REGEXGEN_H
#define VAT_REGEXGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "rng.h"
#include "template.h"
#include "vat.h"

/* Limits written into every regex checker spec (the checker enforces
 * them on gold and candidate answers alike). */
#define VAT_RX_MATCH_LIMIT 1000000
#define VAT_RX_DEPTH_LIMIT 10000
#define VAT_RX_HEAP_LIMIT_KIB 20000
#define VAT_RX_MAX_PATTERN_BYTES 1024

/* Line-id prefixes of the two line fixtures ("e1", "h07"). */
#define VAT_RX_EXAMPLE_PREFIX "e"
#define VAT_RX_HELDOUT_PREFIX "h"

/* ---- lines ------------------------------------------------------------- */

struct vat_rx_line {
    char *text;       /* the line: ASCII, no line breaks                        */
    json_t *expected; /* array of the strings the pattern must extract, in
                         order; NULL for lines read back from a fixture        */
    unsigned kinds;   /* bit k set: a plant of template-defined kind k is in it */
};

struct vat_rx_set {
    struct vat_rx_line *line;
    size_t n;
    size_t cap;
};
#define VAT_RX_SET_INIT {NULL, 0, 0}

void vat_rx_set_release(struct vat_rx_set *s);
/* Returns the union of the kinds of every line of s. */
unsigned vat_rx_set_kinds(const struct vat_rx_set *s);

/* A line under construction.  Pieces are appended left to right; the
 * template must keep a non-digit, non-pattern character between a plant
 * and anything that could extend it (the frames do this). */
struct vat_rx_builder {
    struct vat_buf text;
    json_t *expected;
    unsigned kinds;
};

void vat_rx_begin(struct vat_rx_builder *b);
/* Appends neutral text (neither target nor decoy). */
void vat_rx_put(struct vat_rx_builder *b, const char *s);
void vat_rx_putf(struct vat_rx_builder *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Appends a target: s is appended and added to the expected list.  kind
 * (0..31, template-defined) is recorded in the line's kinds. */
void vat_rx_target(struct vat_rx_builder *b, const char *s, int kind);
/* Appends a decoy: s is appended and must not be extracted. */
void vat_rx_decoy(struct vat_rx_builder *b, const char *s, int kind);
/* Moves the finished line into s and resets b for the next line. */
void vat_rx_finish(struct vat_rx_builder *b, struct vat_rx_set *s);
/* Frees what b holds (for error paths). */
void vat_rx_builder_release(struct vat_rx_builder *b);

/* ---- slot plans -------------------------------------------------------- */

/* Returns a new array of n slot kinds: the nreq required kinds (those that
 * fit when n < nreq), the other slots drawn from kinds 0..nkinds-1 with the
 * given weights, the whole shuffled so required plants land anywhere. */
int *vat_rx_plan(struct vat_rng *r, size_t n, const int *required, size_t nreq,
                 const unsigned *weights, size_t nkinds);

/* ---- frames and filler tokens ------------------------------------------ */

/* Called for each {slot} of a frame: plants one target or decoy into b. */
typedef void (*vat_rx_slot_fn)(struct vat_rx_builder *b, struct vat_rng *r, void *ctx);

/* Expands frame into b.  "{slot}" calls slot(b, r, ctx); any other
 * "{name}" appends one filler token, all ASCII and realistic:
 *   {level} INFO|WARN|ERROR|DEBUG      {svc}  service name ("billing-api")
 *   {user}  lower-case first name      {host} "db-3", "web-12"
 *   {time}  "08:41:07"                 {ip}   "10.4.17.203"
 *   {ver}   "2.10.3" (parts <= 2 digits, no leading 'v')
 *   {id}    "REQ-004512" (JOB, TX, SES, REQ + 6 digits)
 *   {ms}    "132ms"                    {n}    1..999
 *   {pct}   "37%"
 * No filler holds '$' or a run of four or more digits except {id}'s six;
 * a template whose pattern could match a filler must not use that filler.
 * Returns the number of slots expanded, or -1 with e set on an unknown
 * placeholder. */
int vat_rx_expand(struct vat_rx_builder *b, struct vat_rng *r, const char *frame,
                  vat_rx_slot_fn slot, void *ctx, struct vat_err *e);
/* Returns the number of "{slot}" placeholders in frame. */
int vat_rx_frame_slots(const char *frame);

/* ---- line fixtures ----------------------------------------------------- */

/* The CSV text of s (header "line_id,text", ids prefix + 1-based number,
 * zero-padded to the width of s->n) exactly as vat_rx_write_lines writes it. */
char *vat_rx_lines_csv(const struct vat_rx_set *s, const char *prefix);
/* Writes s to root/rel (see vat_rx_lines_csv).  0 or -1 with e set. */
int vat_rx_write_lines(const struct vat_rx_set *s, const char *prefix, const char *root,
                       const char *rel, struct vat_err *e);
/* Reads root/rel back into s (texts only, expected NULL), checking the
 * header and that every record has exactly two fields.  0 or -1. */
int vat_rx_read_lines(struct vat_rx_set *s, const char *root, const char *rel,
                      struct vat_err *e);
/* Records a line fixture of n lines on t ("csv", columns line_id, text). */
struct vat_fixture *vat_rx_add_fixture(struct vat_task *t, const char *rel, const char *role,
                                       size_t n);

/* ---- checker spec ------------------------------------------------------ */

/* A new regex checker spec with the dialect and limits, without cases. */
json_t *vat_rx_spec_new(void);
/* Runs pattern over every line of ex and then ho with vat_regex_extract
 * (the checker's own engine) and sets spec "cases" to
 * [{"text", "expected", "heldout"}, ...].  0, or -1 with e naming the line
 * the pattern failed on. */
int vat_rx_spec_cases(json_t *spec, const char *pattern, const struct vat_rx_set *ex,
                      const struct vat_rx_set *ho, struct vat_err *e);
/* Confirms spec "cases" against the planted sets: same lines in the same
 * order, same held-out marks, and each case's expected list equal to the
 * planted one.  0, or -1 with e naming the first line that differs. */
int vat_rx_cases_agree(const json_t *spec, const struct vat_rx_set *ex,
                       const struct vat_rx_set *ho, struct vat_err *e);
/* Returns a copy of a regex spec that keeps only its held-out cases: the
 * checker as a solver's answer meets it on the hidden lines alone, for
 * asking whether those lines catch a mistake (a trap, a gold mutant) by
 * themselves. */
json_t *vat_rx_spec_heldout(const json_t *spec);
/* Runs pattern over the lines of set and returns how many lines it
 * extracts differently from their expected lists (-1 with e set if the
 * pattern fails to compile or hits a limit).  Templates use it to check
 * that a trap is armed on the held-out lines alone. */
int vat_rx_count_misses(const json_t *spec, const char *pattern, const struct vat_rx_set *set,
                        struct vat_err *e);

/* ---- prompt sections --------------------------------------------------- */

/* Appends the examples section: names the fixture rel, inlines its CSV
 * text (as many leading lines as fit in inline_max bytes, saying so when
 * some are left out), then the expected list of each inlined line. */
void vat_rx_prompt_examples(struct vat_buf *b, const struct vat_rx_set *ex, const char *rel,
                            size_t inline_max);
/* Appends the held-out notice and the answer format shared by the regex
 * templates (one Python re pattern, finditer group 0 semantics). */
void vat_rx_prompt_answer(struct vat_buf *b, size_t n_heldout, const char *line_kind);
/* The same with the answer sentence opened by lead (one of
 * vat_rx_answer_leads; vat_rx_prompt_answer uses the first).  The task
 * driver words these sections from the phrasing grammar instead. */
void vat_rx_prompt_answer_lead(struct vat_buf *b, size_t n_heldout, const char *line_kind,
                               const char *lead);
extern const char *const vat_rx_answer_leads[4];

/* Appends the explicit style's opening: one of the template's data
 * sentences (slot 'd', a paragraph), then one of four questions that
 * differ in how they ask (extract every..., which regex finds exactly...,
 * a regex whose matches are precisely..., pull out each... and nothing
 * else), drawn as slot 'q' and ending in a colon and a line break that
 * open the template's list of rules.  The item is noun (or nouns, in the
 * plural) followed by tail: "date" / "dates", "written YYYY-MM-DD (...)". */
struct vat_task;
void vat_rx_prompt_question(struct vat_buf *b, struct vat_task *t, const char *const *data,
                            size_t n_data, const char *noun, const char *nouns,
                            const char *tail);
#define VAT_RX_PROMPT_QUESTION(b, t, data, noun, nouns, tail)                                \
    vat_rx_prompt_question((b), (t), (data), sizeof(data) / sizeof((data)[0]), (noun), (nouns), \
                           (tail))
/* The natural style's opening: one of the template's data sentences (slot
 * 'd') and one of its questions (slot 'q'), each a paragraph, filled from
 * kv. */
void vat_rx_prompt_ask(struct vat_buf *b, struct vat_task *t, const char *const *data,
                       size_t n_data, const char *const *question, size_t n_question,
                       const char *const *kv);
#define VAT_RX_PROMPT_ASK(b, t, data, question, kv)                                        \
    vat_rx_prompt_ask((b), (t), (data), sizeof(data) / sizeof((data)[0]), (question),       \
                      sizeof(question) / sizeof((question)[0]), (kv))

/* ---- the regex task driver -----------------------------------------------
 * A regex template is a notation space (an index 0..n_formats-1 decodes to
 * one question), a gold and a trap pattern built from the task's params,
 * plant kinds (kind 0..n_kinds-1: targets and decoys), frames, and the
 * prompt's statement of its rules.  Everything else lives here:
 *
 *   generate:     f = vat_rx_choose_format(t, rng, N_FORMATS);
 *                 vat_rx_task_begin(t, rng, &d, e);        line counts
 *                 vat_rx_require(&d.ex, K_...); ...        kinds each set holds
 *                 vat_rx_task_plant(t, rng, &d, &layout, &fmt, e);
 *                 t->params, the rules into a buffer b;
 *                 vat_rx_task_prompt(t, &b, "log lines");
 *   reference:    return vat_rx_task_reference(t, build_pattern, e);
 *   confirm:      .confirm = vat_rx_task_confirm
 *   trap_answer:  return vat_rx_task_trap(t, build_pattern, e);
 *   params:       .params = vat_rx_task_params
 * where build_pattern (a vat_rx_pattern_fn) reads the question back from
 * the params, so gold derives from what the prompt states.                 */

#define VAT_RX_MAX_SLOTS 3     /* slots one frame holds at most             */
#define VAT_RX_MAX_KINDS 32    /* plant kinds of a template (bits of kinds) */
#define VAT_RX_MAX_REQUIRED 64 /* required plants of one line set           */

/* The params of every regex template: examples_min/max (3..8, shown in the
 * prompt) and rows_min/max (20..500 held-out lines). */
extern const struct vat_param vat_rx_task_params[];

/* Returns the notation index (0..n_formats-1) of task t: element
 * t->index of a permutation of all notations keyed by (master seed,
 * template, "questions") alone (vat_rng_permute), the same for every
 * attempt and drawing nothing from r.  So tasks 0..n_formats-1 of a
 * template have distinct notations, hence distinct gold programs, by
 * construction, whichever shard builds them; an index past n_formats
 * wraps, and the build's check refuses the repeat it makes.
 *
 * By level, when the template scores its notations (notation_hardness,
 * 0 the easiest): the notations sorted by score are cut into one class
 * per level (level 1 the easiest 40%, levels 2 to 5 a quarter each of
 * the rest, harder at each), and the task takes element t->index of a
 * permutation of its level's class keyed by (master seed, template,
 * level).  Tasks of one level have distinct notations while the
 * template's count is at most the class's size (vat_rx_level_class), and
 * classes are disjoint, so tasks of different levels never share one. */
unsigned vat_rx_choose_format(const struct vat_task *t, struct vat_rng *r, unsigned n_formats);

/* The size of level's class (and in *first, where it starts in the
 * hardness order), and the notation at place k of that order. */
unsigned vat_rx_level_class(unsigned n_formats, unsigned (*hardness)(unsigned f), int level,
                            unsigned *first);
unsigned vat_rx_level_member(unsigned n_formats, unsigned (*hardness)(unsigned f), unsigned k);

/* One slot to plant: the kind the slot plan drew and how many plants of
 * that kind the line set already holds (so the first of a kind can be the
 * sharpest, e.g. off by exactly one digit). */
struct vat_rx_slot {
    int kind;
    unsigned seen;
};

/* Plants one target or decoy of slot->kind into b; ctx is the template's
 * question (its notation). */
typedef void (*vat_rx_plant_fn)(struct vat_rx_builder *b, struct vat_rng *r,
                                const struct vat_rx_slot *slot, const void *ctx);

/* How a template lays out its lines. */
struct vat_rx_layout {
    /* frames[k]: the n_frames[k] frames holding exactly k "{slot}"s */
    const char *const *frames[VAT_RX_MAX_SLOTS + 1];
    size_t n_frames[VAT_RX_MAX_SLOTS + 1];
    /* a line holds k slots with weight slot_weights[k] (one weighted draw) */
    uint32_t slot_weights[VAT_RX_MAX_SLOTS + 1];
    /* the kinds of the slots the required plants leave free, by weight */
    const unsigned *weights;
    size_t n_kinds;
    vat_rx_plant_fn plant;
};
/* Fills .frames and .n_frames of a layout from four arrays of frames. */
#define VAT_RX_FRAMES(f0, f1, f2, f3)                                                    \
    .frames = {(f0), (f1), (f2), (f3)},                                                  \
    .n_frames = {sizeof(f0) / sizeof((f0)[0]), sizeof(f1) / sizeof((f1)[0]),            \
                 sizeof(f2) / sizeof((f2)[0]), sizeof(f3) / sizeof((f3)[0])}

/* Builds n lines into s: each line's slot count and frame first (lines are
 * widened, from a random one on, until the nreq required plants fit), then
 * the slot plan over all their slots (vat_rx_plan), then the text, calling
 * l->plant for each slot with ctx.  Returns 0, or -1 with e set (n * 3 <
 * nreq, a kind out of range, a frame whose slots do not match its list, an
 * unknown placeholder). */
int vat_rx_build_lines(struct vat_rx_set *s, struct vat_rng *r, size_t n,
                       const struct vat_rx_layout *l, const int *required, size_t nreq,
                       const void *ctx, struct vat_err *e);

/* Returns true if no line of ex or ho repeats another: a held-out line
 * equal to an example line would be shown in the prompt. */
bool vat_rx_lines_distinct(const struct vat_rx_set *ex, const struct vat_rx_set *ho);

/* One line set to draw: how many lines, and the plant kinds it must hold
 * (a kind listed twice is planted twice). */
struct vat_rx_part {
    size_t n;
    int required[VAT_RX_MAX_REQUIRED];
    size_t n_required; /* past VAT_RX_MAX_REQUIRED: refused by the plant step */
};

/* A task's two line sets: examples drawn from the task stream, held-out
 * lines from their own stream, so the shown and the hidden lines are
 * independent draws (more examples leave the held-out lines as they are). */
struct vat_rx_draw {
    struct vat_rx_part ex, ho;
    struct vat_rng ho_rng; /* the task's "heldout" stream */
};

/* Appends a required plant of kind to p. */
void vat_rx_require(struct vat_rx_part *p, int kind);

/* The lowest level whose held-out lines hold the decoy kinds a template
 * holds back from the lower levels.  A held-back kind has weight 0 (so
 * the weighted draw of every other slot is as before: vat_rx_plan never
 * reaches a trailing zero weight) and is required in the held-out lines
 * from this level on, never in the examples: levels 1 and 2 draw the
 * same bytes as without it, and the higher levels meet near misses that
 * no line of the prompt shows. */
#define VAT_RX_HELD_BACK_LEVEL 3

/* Checks the template's line-count params and draws the example count
 * from rng and the held-out count from the task's "heldout" stream into a
 * fresh *d.  Returns 0, or -1 with e set on params out of order. */
int vat_rx_task_begin(const struct vat_task *t, struct vat_rng *rng, struct vat_rx_draw *d,
                      struct vat_err *e);

/* Plants both line sets (examples from rng, held-out lines from
 * d->ho_rng) with vat_rx_build_lines, each line redrawn (same frame and
 * kinds) until t->side owns its text (vat_side_owns), and keeps them as
 * the task's planted truth (t->priv); refuses a draw whose held-out lines lack a required
 * kind or where one line repeats another; writes the line fixtures
 * <id>.csv (main) and <id>.heldout.csv (variant) and records them on t.
 * Returns 0, or -1 with e set. */
int vat_rx_task_plant(struct vat_task *t, struct vat_rng *rng, struct vat_rx_draw *d,
                      const struct vat_rx_layout *l, const void *ctx, struct vat_err *e);

/* Ends generate: appends "examples" and "heldout_lines" to t->params
 * (created if NULL), appends the shared prompt sections (the examples and
 * the answer format, held-out lines called line_kind) to b, which holds
 * the template's statement of the question, moves b into t->prompt and
 * sets t->spec (without cases).  Call after vat_rx_task_plant. */
void vat_rx_task_prompt(struct vat_task *t, struct vat_buf *b, const char *line_kind);

/* Returns a new pattern for the question stated in params: gold, or the
 * trap when naive is true; NULL with e set when params name no question
 * of the template. */
typedef char *(*vat_rx_pattern_fn)(const json_t *params, bool naive, struct vat_err *e);

/* reference(): gold from the params, its extraction from every line of
 * both fixtures as read back from disk into t->spec "cases".  0 or -1. */
int vat_rx_task_reference(struct vat_task *t, vat_rx_pattern_fn pattern, struct vat_err *e);
/* The union of the plant kinds of t's planted held-out lines (heldout)
 * or example lines, as the generator built them; 0 when t holds no
 * planted truth.  What a test asks to see which decoys a task holds. */
unsigned vat_rx_task_kinds(const struct vat_task *t, bool heldout);
/* confirm(): the cases agree with the planted truth (vat_rx_cases_agree).
 * 0, or -1 with e naming the first line that differs. */
int vat_rx_task_confirm(const struct vat_task *t, struct vat_err *e);
/* trap_answer(): the trap from the params, refused unless it misses on
 * the held-out lines alone (the examples show the decoys; the hidden lines
 * must catch the mistake on their own too).  0 or -1. */
int vat_rx_task_trap(struct vat_task *t, vat_rx_pattern_fn pattern, struct vat_err *e);

#endif
