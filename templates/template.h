/* template.h — the versioned template contract and the registry.
 * Exports struct vat_template, struct vat_param and vat_registry[]. */
#ifndef VAT_TEMPLATE_H
#define VAT_TEMPLATE_H

#include <string.h>

#include "rng.h"
#include "task.h"
#include "vat.h"

struct vat_progform;
struct vat_convention;
struct vat_trapmods;

#define VAT_TEMPLATE_V1 1

enum vat_param_type { VAT_PARAM_INT, VAT_PARAM_REAL, VAT_PARAM_BOOL, VAT_PARAM_STR };

/* What a param means to the pipeline beyond its value. */
enum vat_param_role {
    VAT_PARAM_PLAIN, /* a tunable of the question, passed as it is                 */
    /* An INT that sizes the data a prompt shows (rows of a table, records
     * of a file): under inline = "full" config.c caps it so the fixture
     * fits inline_max_bytes.  Declare each such param (fewest and most);
     * the name does not matter. */
    VAT_PARAM_ROWS,
    /* An INT that sizes the held-out data a prompt never shows (a regex
     * task's held-out lines): difficulty levels grow it, inline = "full"
     * leaves it alone.  Declared in pairs like VAT_PARAM_ROWS. */
    VAT_PARAM_HELDOUT,
};

/* One tunable of a template, settable under [templates.<name>] in
 * seeds.toml.  Every template also has `count` (how many tasks). */
struct vat_param {
    const char *name;
    enum vat_param_type type;
    double def;          /* default for INT / REAL / BOOL (0 or 1)   */
    const char *def_str; /* default for STR                          */
    double min, max;     /* accepted range for INT / REAL            */
    const char *doc;     /* one line, shown by `vat list --params`   */
    enum vat_param_role role; /* VAT_PARAM_PLAIN unless declared      */
};

/* Version 1 members.  New members are appended below a version comment,
 * never reordered, so a template written today keeps compiling. */
struct vat_template {
    int version;             /* VAT_TEMPLATE_V1                               */
    const char *name;        /* "grouped_sum": stable, used in task ids       */
    const char *family;      /* "analytics" | "regex" | "sql" | "probe"       */
    const char *answer_kind; /* "value" | "regex" | "sql" | "abstain"         */
    const char *trap;        /* one sentence: the plausible wrong answer      */
    const char *summary;     /* one sentence: what the question asks          */
    const struct vat_param *params; /* terminated by an entry with name NULL  */
    int default_count;       /* tasks when seeds.toml gives no count          */

    /* Writes the fixture file(s) below t->root from rng, and fills
     * t->prompt, t->params, t->fixture[] and t->spec (all but the expected
     * answer); may keep planted truth in t->priv, freed by t->priv_free.
     * t->level (and t->cfg, scaled for it) is set before; the pipeline
     * sets t->difficulty to the level afterwards.  Returns 0, or -1 with
     * e set. */
    int (*generate)(struct vat_task *t, struct vat_rng *rng, struct vat_err *e);
    /* Computes t->gold by READING THE FIXTURE AS WRITTEN, and completes
     * t->spec with the expected answer.  Returns 0, or -1 with e set. */
    int (*reference)(struct vat_task *t, struct vat_err *e);
    /* A second, independent derivation of gold, from the fixture too (a
     * test that replaces a file sets t->priv to NULL); returns 0 when it
     * agrees with t->gold, -1 with e saying how it differs. */
    int (*confirm)(const struct vat_task *t, struct vat_err *e);
    /* Fills t->trap: what the named mistake would answer.  0 or -1. */
    int (*trap_answer)(struct vat_task *t, struct vat_err *e);
    /* Scores a candidate using only t->spec and t->root (so `vat check`
     * can rebuild a task from the verifiers table); never trusts it. */
    struct vat_verdict (*check)(const struct vat_task *t, const char *answer, size_t len);

    /* Appended after the first members (still version 1: a template that leaves these
     * NULL keeps compiling and behaves as before). */
    /* Phrases the explicit prompt uses to name or avoid the trap, ended by
     * NULL.  A template that sets it writes natural prompts: none of these
     * phrases may appear in them (tests/test_prompt.c checks every draw).
     * NULL: the template has explicit prompts only, and its tasks record
     * prompt_style "explicit" whatever seeds.toml asks. */
    const char *const *giveaways;
    /* Columns every prompt (either style) must name, ended by NULL: the
     * ones the answer depends on. */
    const char *const *answer_columns;
    /* Appended later still (a template that leaves it NULL has no program
     * form). */
    /* Analytics only: the program form of the question (templates/
     * progform.h); NULL when the template has none. */
    const struct vat_progform *progform;
    /* Appended later still (NULL: none declared). */
    /* The conventions that decide the answer, ended by {NULL}: for each
     * key of t->params whose value changes the answer, the phrases that
     * state it in domain words; every natural prompt holds one of each
     * (tests/test_wording.c), drawn with vat_prompt_state. */
    const struct vat_convention *conventions;
    /* Phrases that describe the data's defect or the mistake ("typed by
     * hand", "disagree on the sign"), ended by NULL: a natural prompt
     * states the convention instead and never holds one of these (nor one
     * of the general list in tests/test_wording.c). */
    const char *const *defects;
    /* Appended later still (NULL: none accepted). */
    /* Analytics with a CSV fixture only: the cross-cutting trap modules
     * the template accepts and the columns they act on (templates/
     * trapmod.h); each must be proven on its own for the template. */
    const struct vat_trapmods *modules;
    /* Regex: how hard notation f of the template's space is to write a
     * pattern for (0 the easiest), or NULL.  Set, each level takes its
     * notations from a harder class (vat_rx_choose_format). */
    unsigned (*notation_hardness)(unsigned f);
};

/* The question of task t in a question space of n questions: element
 * t->index of a permutation of 0..n-1 keyed by (master seed, template,
 * "questions") alone (vat_rng_permute), drawing nothing from the task's
 * stream and the same for every attempt.  Templates whose gold programs
 * must be distinct (regex, sql) decode it as a mixed-radix number into the
 * parts of the question the gold program spells, so tasks 0..n-1 have
 * distinct gold by construction, on any shard (docs/scale.md). */
static inline uint64_t vat_task_question(const struct vat_task *t, uint64_t n)
{
    return vat_rng_permute(vat_rng_key(t->master_seed, t->tmpl->name, "questions"), n, t->index);
}

/* The number of elements of array a. */
#define VAT_N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* The next digit of a question number read as a mixed-radix number,
 * lowest first: *k % radix, and *k divided by radix. */
static inline size_t vat_question_digit(uint64_t *k, uint64_t radix)
{
    size_t d = (size_t)(*k % radix);
    *k /= radix;
    return d;
}

/* The kind of answer task t takes: "sql" for an analytics task drawn in
 * its program form, else its template's answer_kind. */
static inline const char *vat_task_answer_kind(const struct vat_task *t)
{
    return t->answer_form && strcmp(t->answer_form, "sql") == 0 ? "sql" : t->tmpl->answer_kind;
}

/* The answer form recorded in the experience table: "value" or "sql" for
 * analytics, the answer kind for the other families. */
static inline const char *vat_task_answer_form(const struct vat_task *t)
{
    return t->answer_form ? t->answer_form : t->tmpl->answer_kind;
}

/* The registry: every template of templates/registry.def, in `vat list`
 * order, ended by NULL. */
extern const struct vat_template *const vat_registry[];

/* Returns the template called name, or NULL. */
const struct vat_template *vat_template_find(const char *name);

/* The default check: dispatches on t->spec's "checker" member to the
 * shared verifiers (value, regex, sql, abstain). */
struct vat_verdict vat_check_task(const struct vat_task *t, const char *answer, size_t len);

#endif
