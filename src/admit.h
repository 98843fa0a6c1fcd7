/* admit.h — drawing one task and deciding its admission: derive the
 * task's stream, generate, reference, confirm, trap, then replay gold,
 * trap and a malformed answer through the template's own check.
 * Exports struct vat_replay, struct vat_draw_opts, vat_task_draw,
 * vat_task_admit and vat_malformed_for. */
#ifndef VAT_ADMIT_H
#define VAT_ADMIT_H

#include "template.h"
#include "vat.h"

enum { VAT_ROLE_GOLD, VAT_ROLE_TRAP, VAT_ROLE_MALFORMED, VAT_N_ROLES };
extern const char *const vat_role_names[VAT_N_ROLES];

struct vat_replay {
    struct vat_verdict v[VAT_N_ROLES];
    struct vat_verdict traps[VAT_MAX_TRAPS]; /* t->traps[i], compound templates */
};

struct vat_draw_opts {
    uint64_t master_seed;
    const json_t *cfg;        /* the template's resolved params */
    size_t inline_max_bytes;
    double strength_target;   /* regex/sql: least share of gold mutants the
                                 cases must kill (0: not measured)        */
    bool inline_full;         /* seeds.toml inline = "full"               */
    /* Called with the task of an admitted attempt before the draw ends,
     * while its files are still in the draw's memo (NULL: nothing). */
    void (*admitted)(struct vat_task *t, void *arg);
    void *admitted_arg;
};

/* Draws attempt `attempt` of task t (t initialised with vat_task_init):
 * clears what a previous attempt left, seeds the "task" stream and the
 * "prompt" sub-stream (style when cfg's prompt_style is "mixed", then
 * phrasings), runs
 * generate, fills fixture digests, reference, confirm, trap_answer, the
 * malformed answer, and the three replays into *r.  Returns 0 when the task
 * is admissible (confirm agrees, gold 1.0, trap gate passed and < 1.0,
 * malformed fails the gate, every trap of t->traps[] is proven on its own
 * as the single trap is, the worked completion it fills into t->reasoned
 * (src/reasoning.h) scores 1.0 under auto extraction, and for regex and
 * SQL tasks the cases kill at
 * least strength_target of the gold's mutants), else -1 with e saying
 * which rule failed, or VAT_DRAW_FATAL when a checker's last-resort net
 * (verdict checker_limit) stopped any step of it: the build must fail
 * naming the task, not redraw it. */
#define VAT_DRAW_FATAL (-2)
int vat_task_draw(struct vat_task *t, uint32_t attempt, const struct vat_draw_opts *o,
                  struct vat_replay *r, struct vat_err *e);

/* The malformed answer the pipeline uses when a template sets none: the
 * gold wrapped in prose for value answers ("The answer is: <gold>"), an
 * unbalanced group for regex, a prose-prefixed query for sql. */
char *vat_malformed_for(const struct vat_task *t);

/* Returns the template's params resolved to their defaults, with "count"
 * first (what config.c produces when seeds.toml says nothing). */
json_t *vat_template_default_params(const struct vat_template *tmpl);

/* Runs the task's second derivation again: the template's confirm(), or
 * for an analytics task in its program form vat_progform_confirm. */
int vat_task_confirm(const struct vat_task *t, struct vat_err *e);

#endif
