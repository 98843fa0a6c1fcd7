/* prompt_stats.h — how varied a built corpus's prompts are,
 * per template, from out/experience/{train,test}.jsonl: the tasks of each
 * prompt style, the distinct phrasings drawn (the experience column
 * `phrasing`) per style, and the share of distinct word 4-grams over all
 * of the template's prompt wording (data left out: vat_prompt_wording).
 * `vat audit` adds the result to its summary line as "prompts".
 * Exports vat_prompt_stats, vat_prompt_word4_share and vat_prompt_wording. */
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
