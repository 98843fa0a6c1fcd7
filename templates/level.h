/* level.h — difficulty levels 1..VAT_LEVELS: which level a task is asked
 * at, and what grows with it.
 *
 * seeds.toml asks for levels in [corpus] and per template (src/config.h);
 * the resolved params hold them as five weights.  The pipeline deals a
 * task's level from its own key (seed, template, "difficulty"): the same
 * at every attempt, moving no other stream and no other template, and
 * stratified so each block of consecutive tasks holds every level in
 * proportion to its weight; then it calls vat_task_set_level before
 * generate.  That applies the level's
 * size plan: the task reads its declared size params (the pair of role
 * VAT_PARAM_ROWS, else VAT_PARAM_HELDOUT; template.h) through
 * a per-task copy of its config scaled for the level, so every template
 * grows without code of its own, and level 1 is the config as written.
 *
 * The plan, from the template's level-1 range [min, max] of rows:
 *   analytics and SQL: 1 [min, max]; 2 [(min+max)/2, max], or
 *     [(min+C)/2, C] when max is more than the C rows a prompt shows;
 *     3 [max, 3max]; 4 [max(600, 3max), 1200] — past what a prompt
 *     shows, so a value task is asked in its program form; 5 [2000, 2400]
 *   probes (value answers with no program form): as above, but never
 *     past what the prompt shows (the larger of max and the inline cap)
 *   regex: held-out lines grow x1, x2, x4, x8, x16 up to the param's
 *     declared maximum (breadth, not rows in a prompt)
 * Under inline = "full" rows stop at the inline cap as config.c caps
 * them.  docs/difficulty.md says the same for users.
 * Exports vat_level_draw, vat_level_size_pair, vat_level_rows,
 * vat_level_past_prompt, vat_task_set_level, vat_task_level and
 * vat_level_doc. */
#ifndef VAT_LEVEL_H
#define VAT_LEVEL_H

#include <stdint.h>

#include <jansson.h>

#include "task.h"
#include "vat.h"

struct vat_template;
struct vat_param;

/* The level of task `index` of template `name` under cfg's "difficulty"
 * (five weights w of levels 1..5, total W): element index % W of a
 * permutation of 0..W-1 keyed by (master_seed, name, "difficulty") and
 * the block index / W, read as a level by cumulative weight, so every W
 * consecutive tasks hold level l exactly w[l] times.  1 when cfg has no
 * "difficulty" or its weights are all 0. */
int vat_level_draw(uint64_t master_seed, const char *name, uint32_t index, const json_t *cfg);

/* The template's declared size pair: its VAT_PARAM_ROWS params (fewest,
 * then most), else its VAT_PARAM_HELDOUT pair; false when it has none. */
bool vat_level_size_pair(const struct vat_template *tm, const struct vat_param **pmin,
                         const struct vat_param **pmax);

/* The rows range of `level` for a template whose level-1 range is
 * [min, max] (the plan above); cap_rows: the most rows a prompt shows
 * (inline_max_bytes / VAT_INLINE_ROW_BYTES); full: inline = "full";
 * decl_max: the param's declared maximum (regex only). */
void vat_level_rows(const struct vat_template *tm, int level, long min, long max, long cap_rows,
                    bool full, long decl_max, long *lo, long *hi);

/* Sets t->level and points t->cfg at a copy of it with the size params
 * scaled for the level (level 1: t->cfg as it is).  vat_task_clear puts
 * the original back. */
void vat_task_set_level(struct vat_task *t, int level);

/* Whether every fixture task t can draw at its level (t->level and
 * t->cfg set) holds more rows than a prompt shows: the fewest rows of its
 * VAT_PARAM_ROWS pair past inline_max_bytes / VAT_INLINE_ROW_BYTES.
 * False at level 1, under inline = "full" and for a template without
 * such a pair. */
bool vat_level_past_prompt(const struct vat_task *t);

/* t->level, or 1 when nothing set it (a test calling generate directly). */
int vat_task_level(const struct vat_task *t);

/* Appends, for the card and `vat list`, what grows level by level for
 * template tm under cfg (its resolved params) and inline_max_bytes:
 * "1: 20-120 rows; 2: ...; 4: 600-1200 rows (asked as a program); ...". */
void vat_level_doc(struct vat_buf *b, const struct vat_template *tm, const json_t *cfg,
                   long inline_max_bytes, bool full);

#endif
