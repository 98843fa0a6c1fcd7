/* prompt_stats.h — how varied a built corpus's prompts are (issue 13),
 * per template, from out/experience/{train,test}.jsonl: the tasks of each
 * prompt style, the distinct phrasings drawn (the experience column
 * `phrasing`) per style, and the share of distinct word 4-grams over all
 * of the template's prompt wording (data blocks left out: a ```-fenced
 * block and everything from "The data is the CSV file" on).  `vat audit`
 * adds the result to its summary line as "prompts", gathering it from the
 * experience rows it reads (vat_prompt_stats_begin/_add/_end).  Memory
 * stays flat in the number of prompts: the 4-grams wait in an external
 * sort (extsort.h).
 * Exports vat_prompt_stats, vat_prompt_stats_begin, _add, _end and
 * vat_prompt_word4_share. */
#ifndef VAT_PROMPT_STATS_H
#define VAT_PROMPT_STATS_H

#include <stddef.h>

#include <jansson.h>

#include "vat.h"

/* {"<template>": {"tasks": N, "explicit": N, "natural": N,
 *   "phrasings": {"explicit": K, "natural": K}, "word4_distinct_share": S}}
 * with templates in byte order.  A row that cannot be read is skipped (the
 * leak audit reports it).  Returns a new object, or NULL with e set when
 * neither experience file can be opened. */
json_t *vat_prompt_stats(const char *root, struct vat_err *e);

/* The same, row by row: begin (temporary files in tmpdir, NULL for
 * $TMPDIR or /tmp; at most budget bytes of 4-grams in memory), add each
 * experience row (rows without a template or prompt string are skipped),
 * end: the object above (NULL with e set when a temporary file failed),
 * and ps is freed. */
struct vat_prompt_stats;
struct vat_prompt_stats *vat_prompt_stats_begin(const char *tmpdir, size_t budget);
void vat_prompt_stats_add(struct vat_prompt_stats *ps, const json_t *row);
json_t *vat_prompt_stats_end(struct vat_prompt_stats *ps, struct vat_err *e);

/* Distinct word 4-grams / all word 4-grams over texts[0..n-1] (words are
 * runs of letters, digits, '_' and '`', lower-cased; data blocks left out
 * as above); 1 when there is no 4-gram at all. */
double vat_prompt_word4_share(const char *const *texts, size_t n);

#endif
