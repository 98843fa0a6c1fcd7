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

/* Builds the corpus.  Returns 0 when every template admitted its count, 1
 * when some template fell short (the corpus is still written), -1 with e
 * set on an input or I/O error.  stats may be NULL; else the caller frees
 * stats->per. */
int vat_build(const struct vat_config *c, const struct vat_build_opts *o,
              struct vat_build_stats *stats, struct vat_err *e);

#endif
