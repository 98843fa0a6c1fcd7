/* task.h — the task record the template contract fills (templates/
 * template.h) and the builder carries through admission and the tables:
 * a task's identity, its prompt, fixtures, checker spec, gold, trap and
 * malformed answer.  Exports struct vat_task, struct vat_fixture, struct
 * vat_trap and their helpers. */
#ifndef VAT_TASK_H
#define VAT_TASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "rng.h"
#include "vat.h"
#include "verifiers.h"

/* A task has the fixtures its checker spec may name. */
#define VAT_MAX_FIXTURES VAT_SPEC_MAX_FIXTURES

struct vat_fixture {
    char *path;         /* relative to the corpus root: fixtures/<tmpl>/<bucket>/<id>.csv */
    const char *format; /* "csv" | "sqlite" (static)                           */
    const char *role;   /* "main" | "variant" (static)                         */
    long rows;          /* data rows (all tables for sqlite)                   */
    json_t *columns;    /* array of column names; for sqlite "table.column"   */
    char sha256[65];    /* filled by the pipeline after generate               */
};

struct vat_template;

/* Compound templates arm several traps at once; each is one single mistake
 * whose answer admission proves separately (differs from gold, passes the
 * gate, scores below 1) and the tables replay under its own role. */
#define VAT_MAX_TRAPS 10
struct vat_trap {
    const char *name;   /* short, stable: "duplicates" (static)             */
    const char *text;   /* one sentence: the mistake (static)               */
    char *answer;       /* what that mistake alone answers                  */
    unsigned module;    /* a trap module's bit (templates/trapmod.h), else 0 */
};

struct vat_task {
    const struct vat_template *tmpl;
    char id[96];            /* "<template>-<index:05>"                           */
    uint32_t index;
    int side;               /* VAT_SPLIT_TRAIN or VAT_SPLIT_TEST: set by the
                               pipeline before generate (train when nothing
                               sets it), kept across redraws                  */
    uint32_t attempt;       /* redraw number: 0 for the first draw               */
    uint64_t master_seed;
    char stream_hex[33];    /* the derived PCG32 (state, seq) that drew it       */
    const char *root;       /* corpus root: fixtures live below it               */
    const json_t *cfg;      /* the template's resolved params from seeds.toml    */
    size_t inline_max_bytes;/* prompts inline the data up to this size          */

    /* generate() fills these */
    char *prompt;
    json_t *params;         /* the question's values, as the prompt states them */
    int difficulty;         /* 1 (easy) .. 5 (hard): the level asked for once
                               the pipeline has drawn it (t->level)           */
    /* True when the prompt alone answers the question without opening a
     * file: for value answers every fixture row the answer depends on is
     * shown; for regex and SQL the description of the strings or of the
     * schema suffices (held-out cases and variants are hidden by design).
     * generate() sets it (the prompt helpers of generators/ do for the
     * templates that use them); false until then. */
    bool self_contained;
    struct vat_fixture fixture[VAT_MAX_FIXTURES]; /* [0] is the main fixture */
    int n_fixtures;
    json_t *spec;           /* checker parameters; reference() completes it      */
    void *priv;             /* template-private state (planted truth etc.)       */
    void (*priv_free)(void *);

    /* reference() fills gold; trap_answer() fills trap (and may set
     * malformed, otherwise the pipeline derives one from the answer kind). */
    char *gold;             /* the answer exactly as a solver should give it    */
    char *trap;
    char *malformed;

    /* Prompt style: set by the pipeline before generate() from
     * the "prompt" sub-stream, so neither changes a fixture draw. */
    const char *prompt_style; /* "explicit" | "natural" (static)               */
    struct vat_rng prompt_rng;/* phrasings are drawn from here only            */
    char phrasing[128];       /* the phrasings drawn, e.g. "o0d21q3c1a40"       */
    bool inline_full;         /* seeds.toml inline = "full": size fixtures to
                                 be shown whole in the prompt                  */
    /* trap_answer() of a compound template fills these (t->trap is then
     * the answer of every mistake at once). */
    struct vat_trap traps[VAT_MAX_TRAPS];
    int n_traps;
    /* "sql" when the task is an analytics question in its program form
     * (templates/progform.h: one SELECT, checked on variant CSVs), else
     * NULL: the answer is of the template's answer_kind. */
    const char *answer_form;
    /* The task as a tool-use environment, filled after admission
     * (templates/expert.h): the env table's row and the expert's replay. */
    json_t *env;
    /* Admission fills it: the worked completion of the sft_reasoning
     * table (src/reasoning.h), proven to score 1.0 under auto extraction. */
    char *reasoned;
    /* The difficulty level asked for (1..VAT_LEVELS; 0: unset, read as 1
     * by vat_task_level), set with vat_task_set_level (templates/level.h)
     * before generate; cfg then points at level_cfg, its size params
     * scaled for the level, and base_cfg keeps the config as written. */
    int level;
    json_t *level_cfg;
    const json_t *base_cfg;
    /* The trap modules armed (VAT_TM_* bits of templates/trapmod.h, set
     * by vat_trapmod_arm before generate), and those whose cleaning a
     * module's trap switches off while it reads the fixture. */
    unsigned trapmods;
    unsigned trapmods_off;
};

/* Sets t->id and the identity fields; everything else zeroed. */
void vat_task_init(struct vat_task *t, const struct vat_template *tmpl, uint32_t index,
                   const char *root);
/* Frees everything the task owns (keeps identity fields) so it can be redrawn. */
void vat_task_clear(struct vat_task *t);

/* Adds a fixture record; path is relative to the root and copied.
 * Returns the fixture (never NULL; aborts past VAT_MAX_FIXTURES). */
struct vat_fixture *vat_task_add_fixture(struct vat_task *t, const char *relpath,
                                         const char *format, const char *role);
/* Tasks per fixture folder: a task's files go to the folder of its index
 * divided by this, so with at most VAT_MAX_FIXTURES files a task no folder
 * holds more than 8,000 entries (dataset hubs ask for at most 10,000 per
 * folder), and a template's folder holds one subfolder per 1,000 tasks. */
#define VAT_FIXTURE_BUCKET 1000
/* The folder of task index's fixtures below fixtures/<template>/: the
 * index divided by VAT_FIXTURE_BUCKET, three digits at least ("000" for
 * tasks 0-999, "012" for 12,000-12,999).  Written into out (16 bytes). */
void vat_fixture_bucket(uint32_t index, char out[16]);
/* The relative path "fixtures/<template>/<bucket>/<id><suffix>" in a new
 * string (vat_fixture_bucket). */
char *vat_task_fixture_relpath(const struct vat_task *t, const char *suffix);
/* Resolved template params from seeds.toml (aborts on a missing name: the
 * template declared it, so config.c always provides it). */
long vat_task_int(const struct vat_task *t, const char *name);
/* How many bytes of data a prompt may inline: t->inline_max_bytes, or no
 * limit under inline = "full" (then config.c has capped the params
 * rows_min and rows_max of analytics, SQL and probe templates at about
 * inline_max_bytes / VAT_INLINE_ROW_BYTES rows, never below the param's
 * declared minimum, so every fixture is drawn small enough to show whole). */
size_t vat_task_inline_cap(const struct vat_task *t);
#define VAT_INLINE_ROW_BYTES 70
double vat_task_real(const struct vat_task *t, const char *name);
bool vat_task_bool(const struct vat_task *t, const char *name);
const char *vat_task_str(const struct vat_task *t, const char *name);

#endif
