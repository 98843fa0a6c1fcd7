/* build.h — `vat build`: draw and admit every task of the corpus on N
 * threads, make program answers unique per template, write fixtures and
 * the seven tables.  Output is byte-identical whatever --jobs is.
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
    FILE *progress;     /* a terminal to draw progress on, or NULL       */
    FILE *summary;      /* where the per-template summary goes, or NULL  */
    int card;           /* also write the dataset card out/README.md
                           (vat_card_write) into the stage before the swap */
};

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
 * tasks, a symbolic link in the live trees.  stats may be NULL; else the
 * caller frees stats->per (it is zeroed on an early error). */
int vat_build(const struct vat_config *c, const struct vat_build_opts *o,
              struct vat_build_stats *stats, struct vat_err *e);

/* vat build holds every task and every table row in memory until the
 * tables are written (streaming them is the scale work to come), so a
 * config whose estimate exceeds this bound is refused up front (exit 2):
 * 4 GiB, about 82,000 tasks spread over the 17 default templates at
 * their default params (3,000 per template, 51,000 tasks, estimates at
 * about 2.5 GiB; 100,000 per template at about 83 GiB). */
#define VAT_BUILD_MEMORY_BOUND ((double)4 * 1024 * 1024 * 1024)
/* The estimate in bytes: per task, the slot plus twice the table bytes
 * its template writes per task (measured on the default corpus; more for
 * a larger inline_max_bytes), over the templates --only selects (only
 * NULL: all).  *tasks (may be NULL) gets the task count. */
double vat_build_memory_estimate(const struct vat_config *c, const char *only, long *tasks);

#endif
