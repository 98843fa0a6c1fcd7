/* reasoning.h — the worked completion of a task (the sft_reasoning
 * table): a few lines of reasoning particular to the task, then the gold
 * answer alone in a fenced block of its kind, the form `auto` extraction
 * takes (docs/extraction.md).  Admission proves that extraction of it
 * scores 1.0 (src/admit.c); the system message that asks for this form
 * is vat_system_prompt (src/tables.h).  Exports vat_reasoned_completion. */
#ifndef VAT_REASONING_H
#define VAT_REASONING_H

#include "task.h"
#include "vat.h"

/* The worked completion of an admitted task t (gold, trap, spec, params
 * and fixtures set), in a new string.  Every figure in it is computed:
 * what the question fixes (its params), the main fixture's size, the
 * groups or items of the answer and a value or two of it (value answers),
 * the rows the query returns on the main fixture (SQL answers, run in the
 * sandbox) or what the pattern extracts from an example line (regex
 * answers), and the mistake the task is built to catch with what it
 * would give instead.  Held-out cases are never quoted.  Then a fence
 * tagged json, regex or sql holding gold exactly.  Deterministic: the
 * same task gives the same bytes. */
char *vat_reasoned_completion(const struct vat_task *t);

#endif
