/* prompt_stats.h — how varied a built corpus's prompts are,
 * per template, from out/experience/{train,test}.jsonl: the tasks of each
 * prompt style, the distinct phrasings drawn (the experience column
 * `phrasing`) per style, and the share of distinct word 4-grams over all
 * of the template's prompt wording (data blocks left out: a ```-fenced
 * block and everything from "The data is the CSV file" on).  `vat audit`
 * adds the result to its summary line as "prompts".
 * Exports vat_prompt_stats and vat_prompt_word4_share. */
#ifndef VAT_PROMPT_STATS_H
#define VAT_PROMPT_STATS_H
#ifdef VAT_LAYER_BUILDER
#error "prompt_stats.h is the command's (src/main.c, src/cmd_*.c): the builder must not include it"
#endif

#include <stddef.h>

#include <jansson.h>

#include "vat.h"

/* {"<template>": {"tasks": N, "explicit": N, "natural": N,
 *   "phrasings": {"explicit": K, "natural": K}, "word4_distinct_share": S}}
 * with templates in byte order.  A row that cannot be read is skipped (the
 * leak audit reports it).  Returns a new object, or NULL with e set when
 * neither experience file can be opened. */
json_t *vat_prompt_stats(const char *root, struct vat_err *e);

/* Distinct word 4-grams / all word 4-grams over texts[0..n-1] (words are
 * runs of letters, digits, '_' and '`', lower-cased; data blocks left out
 * as above); 1 when there is no 4-gram at all. */
double vat_prompt_word4_share(const char *const *texts, size_t n);

#endif
