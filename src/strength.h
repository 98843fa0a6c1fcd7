/* strength.h — how strong a task's checker is: the mutants of its gold
 * answer (src/mutate.h) scored through the task's own check.  A
 * mutant that fails the gate is invalid (it says nothing about the
 * cases); one that scores below 1 is killed; one that scores 1 survives:
 * the cases cannot tell it from gold.  Mutants equivalent to gold by
 * construction are counted apart and never scored.  The share killed is
 * killed / (killed + survivors).
 *
 * Per task (vat_strength_task, usable at admission: it needs t->tmpl,
 * t->spec complete, t->gold and t->root) and per template over a built
 * corpus (vat_strength_corpus, what `vat strength` prints), for the regex
 * and sql families.
 * Exports struct vat_strength, struct vat_strength_kind, struct
 * vat_strength_template, struct vat_strength_report, vat_strength_task,
 * vat_strength_add, vat_strength_share, vat_strength_release,
 * vat_strength_corpus, vat_strength_template_json,
 * vat_strength_report_release and vat_cmd_strength. */
#ifndef VAT_STRENGTH_H
#define VAT_STRENGTH_H

#include <stdio.h>

#include "mutate.h"
#include "template.h"
#include "vat.h"

#define VAT_STRENGTH_TARGET 0.90
#define VAT_STRENGTH_MAX_KINDS 24

/* Counts for one mutation kind. */
struct vat_strength_kind {
    const char *kind; /* static, from mutate.h */
    long mutants, equivalent, invalid, killed, survivors;
};

struct vat_strength {
    long mutants;    /* distinct mutant texts, none equal to gold       */
    long equivalent; /* equivalent to gold by construction: not scored  */
    long invalid;    /* failed the checker's gate: not informative      */
    long killed;     /* scored below 1                                  */
    long survivors;  /* scored 1                                        */
    struct vat_strength_kind kind[VAT_STRENGTH_MAX_KINDS];
    size_t nkinds;
    /* every survivor (kind and text), in the order the mutants came */
    struct vat_mutants surv;
    char error[256]; /* why vat_strength_task returned -1 */
    /* Set by the caller, > 0: stop scoring once the share is sure to
     * reach stop_at whatever the mutants not yet scored give (the
     * builder's admission, which only asks whether it does); the counts,
     * kinds and survivors are then those of the mutants scored, and
     * stopped is set.  0 (VAT_STRENGTH_INIT): every mutant is scored. */
    double stop_at;
    bool stopped;
};
#define VAT_STRENGTH_INIT {0}

/* Mutates t->gold by the task's checker ("regex" or "sql" in t->spec),
 * scores every non-equivalent mutant with t->tmpl->check and fills *out
 * (initialise it with VAT_STRENGTH_INIT; release it after).  Gold itself
 * must score 1 first.  Returns 0, or -1 with out->error set (not a regex
 * or sql task, gold cannot be mutated, gold does not score 1). */
int vat_strength_task(const struct vat_task *t, struct vat_strength *out);
/* The same, scoring gold and every mutant with check(ctx, t, ...) instead
 * of t->tmpl->check: the builder passes a check that gives the same
 * verdicts from state prepared once per task (admit.c).  gold, when not
 * NULL, is gold's verdict by that same check, already had (the builder's
 * admission replay): gold is then not scored again. */
typedef struct vat_verdict (*vat_task_check_fn)(void *ctx, const struct vat_task *t,
                                                const char *answer, size_t len);
int vat_strength_task_with(const struct vat_task *t, vat_task_check_fn check, void *ctx,
                           const struct vat_verdict *gold, struct vat_strength *out);

/* Adds b's counts into a (kinds merged by name) and appends copies of b's
 * survivors. */
void vat_strength_add(struct vat_strength *a, const struct vat_strength *b);

/* killed / (killed + survivors); 1 when nothing was scored. */
double vat_strength_share(const struct vat_strength *s);

void vat_strength_release(struct vat_strength *s);

/* One template's totals over a corpus. */
struct vat_strength_template {
    const struct vat_template *tmpl;
    long tasks;        /* tasks measured                                 */
    long failed;       /* tasks that could not be measured (see error)   */
    struct vat_strength s;
    char example_task[96]; /* task of the first survivor, "" when none  */
    char error[320];       /* the first failure, "" when none            */
};

struct vat_strength_report {
    struct vat_strength_template *per; /* registry order, templates with tasks */
    size_t n;
};

/* Measures every regex and sql task of the corpus at root (its
 * out/verifiers and out/experience tables; only the templates named in
 * the comma-separated list only, when it is not NULL).  When task_lines
 * is not NULL a JSON line per task is written to it.  Returns 0, or -1
 * with e set when the corpus cannot be read (no tables, a bad row, an
 * unknown template). */
int vat_strength_corpus(const char *root, const char *only, FILE *task_lines,
                        struct vat_strength_report *r, struct vat_err *e);
void vat_strength_report_release(struct vat_strength_report *r);

/* The JSON line of one template's totals: counts, share_killed, target,
 * passed, per-kind counts and one survivor example (mutant text clipped). */
json_t *vat_strength_template_json(const struct vat_strength_template *p, double target);

/* `vat strength [--root DIR] [--target X] [--only a,b] [--tasks]`
 * (src/cmd_strength.c). */
int vat_cmd_strength(int argc, char **argv);

#endif
