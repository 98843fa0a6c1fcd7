/* config.h — seeds.toml: load, validate against the registry, resolve
 * defaults.  Unknown keys, wrong types, out-of-range values, duplicates
 * and syntax errors are `PATH:LINE: reason` errors, never ignored.
 * Exports struct vat_config, vat_config_load, vat_config_parse,
 * vat_config_parse_registry, vat_config_release.
 *
 * seeds.toml layout:
 *   [corpus]  master_seed (int >= 0; default 1),
 *             test_fraction (0 < f < 1; default 0.2),
 *             split ("random" | "held_out_templates"; default "random"),
 *             held_out_templates (array of template names; default [],
 *               non-empty exactly when split is "held_out_templates"),
 *             split_salt (string; default "vat-split-v1"),
 *             inline_max_bytes (int 0..1048576; default 6000),
 *             max_redraws (int 0..1000; default 40)
 *             strength_target (0..1; default 0.9): a regex or SQL task is
 *             admitted only when its cases kill at least this share of
 *             the mutants of its gold (0 turns the rule off)
 *             prompt_style ("explicit" | "natural" | "mixed"; default
 *               "explicit"): how prompts are worded; "mixed" draws one
 *               of the two per task (docs/tables.md, prompt_style)
 *             inline ("sample" | "full"; default "sample"): "full" sizes
 *               every fixture to be shown whole in its prompt
 *             difficulty (default 1): the level 1..5 tasks are asked at —
 *               a level, a range "2-4" or [2, 4] (uniform), or weights
 *               per level {1 = 1, 2 = 2, 5 = 1}; dealt per task from its
 *               own key (templates/level.h, docs/difficulty.md)
 *   [templates.<name>]  count (int 0..100000), prompt_style and difficulty
 *             (as in [corpus], overriding it for this template) and the
 *             template's own params (struct vat_param list), each
 *             optional.  The resolved object holds "difficulty" as the
 *             five weights of levels 1..5. */
#ifndef VAT_CONFIG_H
#define VAT_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "vat.h"

struct vat_config {
    char *path;               /* as given                                   */
    uint64_t master_seed;
    double test_fraction;
    char *split;              /* "random" | "held_out_templates"           */
    char *split_salt;
    json_t *held_out;         /* array of template names                   */
    long inline_max_bytes;
    long max_redraws;
    double strength_target;
    char *prompt_style;       /* "explicit" | "natural" | "mixed"          */
    bool inline_full;         /* inline = "full"                           */
    long difficulty[VAT_LEVELS]; /* weight of each level 1..5 (default: 1 only) */
    json_t *templates;        /* name -> resolved params object, with "count",
                                 then "prompt_style" (resolved), for every
                                 registered template, in registry order    */
};

/* Loads and validates path.  0, or -1 with e = "PATH:LINE: reason" (or
 * "vat: cannot open 'PATH': ..."). */
int vat_config_load(struct vat_config *c, const char *path, struct vat_err *e);
/* The same from text already in memory (path used in messages). */
int vat_config_parse(struct vat_config *c, const char *text, size_t len, const char *path,
                     struct vat_err *e);
void vat_config_release(struct vat_config *c);

struct vat_template;
/* vat_config_parse against another registry (a NULL-terminated list in
 * vat_registry's form) instead of vat_registry: lets tests exercise every
 * param type and range whatever the real templates declare. */
int vat_config_parse_registry(struct vat_config *c, const char *text, size_t len,
                              const char *path, const struct vat_template *const *registry,
                              struct vat_err *e);

#endif
