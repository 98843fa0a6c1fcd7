/* shard.h — many machines: `vat build --shard K/N` records what it built
 * in out/shard.json, and `vat merge` joins the N shards of one config
 * into the corpus a direct build writes, byte for byte (docs/scale.md).
 *
 * out/shard.json (one per shard root, listed in its manifest):
 *   {"shard_format":1, "vat_version":"0.2.0", "config_sha256":"…",
 *    "master_seed":N, "only":null|"a,b", "shard":K, "of":N,
 *    "templates":[{"name","requested","admitted","redrawn","rejected"},…]}
 * A task belongs to shard K of N when its index % N == K - 1 (vat_shard_has,
 * build.h), whatever its template.  Exports vat_shard_write and vat_merge. */
#ifndef VAT_SHARD_H
#define VAT_SHARD_H

#include <stdio.h>

#include "build.h"
#include "config.h"
#include "vat.h"

#define VAT_SHARD_FILE "out/shard.json"
#define VAT_SHARD_FORMAT 1

/* Writes o->root/out/shard.json for the shard o names, from the build's
 * per-template stats.  0 or -1 with e set. */
int vat_shard_write(const struct vat_config *c, const struct vat_build_opts *o,
                    const struct vat_build_stats *st, struct vat_err *e);

/* Joins the shard roots into the corpus root `to` through the store
 * (stage, card, manifest, swap): fixtures copied, each table's rows merged
 * in task_id order, the card written from the summed stats.  Refuses, with
 * one line in e, shards of another config (c's seeds file digest), another
 * vat version or another N, a duplicate or missing shard, a root without
 * out/shard.json.  Returns 0 when every template admitted its count, 1
 * when some fell short (still merged), -1 on an error (nothing written). */
int vat_merge(const struct vat_config *c, const char *to, char *const *roots, int nroots,
              FILE *summary, struct vat_err *e);

#endif
