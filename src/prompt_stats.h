/* prompt_stats.h — how varied a built corpus's prompts are,
 * per template, from out/experience/{train,test}.jsonl: the tasks of each
 * prompt style, the distinct phrasings drawn (the experience column
 * `phrasing`) per style, and the share of distinct word 4-grams over all
 * of the template's prompt wording (data left out: vat_prompt_wording).  `vat audit`
 * adds the result to its summary line as "prompts", gathering it from the
 * experience rows it reads (vat_prompt_stats_begin/_add/_end).  Memory
 * stays flat in the number of prompts: the 4-grams wait in an external
 * sort (extsort.h).
 * Exports vat_prompt_stats, vat_prompt_stats_begin, _add, _end,
 * vat_prompt_word4_share and vat_prompt_wording. */
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
 * runs of letters, digits, '_' and '`', lower-cased; data left out as
 * vat_prompt_wording does); 1 when there is no 4-gram at all. */
double vat_prompt_word4_share(const char *const *texts, size_t n);

/* A prompt's wording without its data (new string): fenced blocks, the
 * paragraphs that only name a data file and its size ("The data is the CSV
 * file ...", "The workbook is the file ...", "Sheet `...`", "The example
 * lines are in the file ..."), a schema's CREATE TABLE statements, INSERT
 * rows and "-- " comments, and a regex example's expected list
 * ("- e1: [...]") and the fixture paths it names.  What is left is the
 * text a template wrote. */
char *vat_prompt_wording(const char *prompt);

#endif
