/* card.h — out/README.md, the corpus's Hugging Face dataset card: YAML
 * front matter with one config per table (train and test data files,
 * `experience` the default), then the templates, preference signals,
 * checker semantics, splits, license and provenance.  Every fact comes
 * from the registry, the config, the build stats or the tables the build
 * just wrote; the bytes depend on nothing else (no dates, no paths of
 * this machine).  Exports vat_card_render and vat_card_write. */
#ifndef VAT_CARD_H
#define VAT_CARD_H

#include "build.h"
#include "config.h"
#include "vat.h"

/* Returns the card text in a new string, or NULL with e set.  Reads the
 * seeds file at c->path (for its SHA-256) and the tables below o->root,
 * so call it after the tables are written.  o->only names the templates
 * built (NULL: all); st gives requested/admitted per template and may be
 * NULL (then the templates are the registry's, filtered by o->only). */
char *vat_card_render(const struct vat_config *c, const struct vat_build_opts *o,
                      const struct vat_build_stats *st, struct vat_err *e);
/* Renders the card and writes it to o->root/out/README.md (temporary
 * file, then rename).  0, or -1 with e set. */
int vat_card_write(const struct vat_config *c, const struct vat_build_opts *o,
                   const struct vat_build_stats *st, struct vat_err *e);
/* The card of a folder packed from the build at root (`vat pack`): the
 * front matter made again from the tables with data_files under "out/",
 * then the body of root/out/README.md unchanged.  A new string, or NULL
 * with e set. */
char *vat_card_packed(const char *root, struct vat_err *e);

/* The sha256 of the seeds file at path (as the card and a shard record
 * it), in hex.  0, or -1 with e set. */
int vat_seeds_sha256(const char *path, char out[65], struct vat_err *e);

#endif
