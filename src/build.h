/* build.h — `vat build`: draw and admit every task of the corpus (or of
 * one shard of it) on N threads, check that program answers are unique per
 * template (they are by construction: docs/scale.md), write fixtures and
 * the tables.  Output is byte-identical whatever --jobs is.
 * Exports struct vat_build_opts, struct vat_build_stats and vat_build. */
#ifndef VAT_BUILD_H
#define VAT_BUILD_H

#include <stdio.h>

#include "config.h"
#include "vat.h"

struct vat_build_opts {
    const char *root;   /* corpus root: out/ and fixtures/ go below it  */
    int jobs;           /* worker threads, >= 1                          */
    const char *only;   /* comma-separated template names, or NULL       */
    FILE *progress;     /* where progress goes (stderr), or NULL: quiet  */
    int progress_tty;   /* progress is a terminal: one live line redrawn;
                           else one line every progress_every seconds    */
    double progress_every; /* seconds between lines off a terminal; <= 0
                              gives 5                                    */
    FILE *summary;      /* where the per-template summary goes, or NULL  */
    int card;           /* also write the dataset card out/README.md
                           (vat_card_write) into the stage before the swap */
    int shard, shards;  /* --shard K/N: build only shard K (1..N) of N, the
                           tasks whose index % N == K - 1, and record it in
                           out/shard.json (src/shard.h); 0, 0: the whole corpus */
};

/* True when task index belongs to the shard o builds (always, unsharded):
 * a pure function of the index, so no task depends on the shard layout. */
static inline int vat_shard_has(const struct vat_build_opts *o, uint32_t index)
{
    return o->shards < 1 || (long)(index % (uint32_t)o->shards) == (long)o->shard - 1;
}

struct vat_template_stats {
    const char *name;
    long requested, admitted, redrawn, rejected;
    char last_rejection[512];
};

struct vat_build_stats {
    struct vat_template_stats *per;
    size_t n;
    long tasks, admitted, rejected;
};

/* Builds the corpus: stages fixtures/, the tables, the card
 * (out/README.md, when o->card) and out/manifest.json in root/.vat-stage, then makes
 * them current with one swap per tree (store.h), so the live corpus is
 * only ever the old one or the new one.  Returns 0 when every template
 * admitted its count, 1 when some template fell short (the corpus is
 * still written), -1 with e set on an input or I/O error (then the old
 * corpus stays): a second build running in the root, a config over
 * VAT_BUILD_MEMORY_BOUND, --only into a root holding other templates'
 * tasks, a symbolic link in the live trees; -2 with e set when a task
 * stopped the build (a checker's last-resort net fired on it, or two gold
 * programs of a template coincide: its count is past its question space)
 * or what was admitted fails the audit's cross-split checks (see
 * VAT_BUILD_PRINTS_BUDGET), the old corpus again staying.  stats may be NULL; else the
 * caller frees stats->per (it is zeroed on an early error). */
int vat_build(const struct vat_config *c, const struct vat_build_opts *o,
              struct vat_build_stats *stats, struct vat_err *e);

/* vat build streams: the workers draw tasks in task-id order into a
 * window of VAT_BUILD_WINDOW_PER_JOB slots per job, and the writer writes
 * each task's rows to the staged tables as soon as every earlier task is
 * written, then frees the slot.  What grows with the count is the task
 * list (8 bytes a task) and, for regex and sql templates, the normalised
 * gold programs kept to refuse repeats.  A config whose estimate exceeds
 * VAT_BUILD_MEMORY_BOUND is refused up front (exit 2): 256 MiB, the
 * build's share of the 300 MB a 100,000-task build must stay under (a
 * 100,000-task default mix estimates at about 20 MiB; every template at
 * the largest count, 100,000, 1.7 million tasks, at about 270 MB, over
 * it; the measured peaks are in docs/corpus-store.md). */
#define VAT_BUILD_WINDOW_PER_JOB 64
/* Draws done per wake-up of the writer (at most the window). */
#define VAT_BUILD_WAKE_BATCH 16
#define VAT_BUILD_MEMORY_BOUND ((double)256 * 1024 * 1024)
/* The build takes the audit's fingerprints of every task it admits
 * (prints.h) and sorts them on disk, holding at most this much of them,
 * to run the audit's cross-split checks before the swap: a corpus that
 * would fail them is not swapped in (vat_build returns -2 naming the
 * first finding).  A shard writes them to out/prints. */
#define VAT_BUILD_PRINTS_BUDGET ((size_t)32 << 20)
/* The estimate in bytes: the task list, the program answers held per
 * regex or sql task, and the window of slots with the rows of one task
 * each (per template, measured on the default corpus; more for a larger
 * inline_max_bytes), over the templates --only selects (only NULL: all).
 * *tasks (may be NULL) gets the task count. */
double vat_build_memory_estimate(const struct vat_config *c, const char *only, int jobs,
                                 long *tasks);

#endif
