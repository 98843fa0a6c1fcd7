/* expert.h — a task as a tool-use environment, built after its admission:
 * the env spec that loads its main fixture as the prompt describes it
 * (lib/episode.h), the agent prompt (the task's prompt with its data
 * replaced by the tools and the tables' schema and a few rows), the tool
 * schemas, and an expert transcript: describe, one or two probing calls,
 * the program that answers, and submit.  A value answer is read from the
 * rows the program's query returned through the sql tool (the task's
 * program-form query, formatted as the prompt asks), never from the gold
 * answer; a program answer (regex, SQL) is the template's program, run
 * through try or sql before it is submitted.  The transcript is then
 * replayed through a fresh episode: it is kept when every observation
 * comes back byte for byte and the submitted answer scores 1.0 with the
 * task's own check.
 *
 * t->env gets an object: tool_set ("data" | "regex"), prompt (the agent
 * prompt), tools (JSON text), env_json (JSON text), completion (the
 * transcript's messages, [] when none was kept) and agent (the replay's
 * verdict: answer, gate_passed, score, code, reason; null when none was
 * kept).  Exports vat_expert_run. */
#ifndef VAT_EXPERT_H
#define VAT_EXPERT_H

#include "task.h"
#include "vat.h"

/* How the expert's answer is scored: the task's check (admission passes
 * its prepared one). */
typedef struct vat_verdict (*vat_expert_check)(void *ctx, const struct vat_task *t,
                                               const char *answer, size_t len);

/* Builds t->env for an admitted task t, scoring submitted answers with
 * check (NULL: the template's own check).  0, or -1 with e set when the
 * task cannot be offered as an environment (its fixture does not load as
 * its prompt says); an expert that does not reach 1.0 is not an error (no
 * transcript is kept). */
int vat_expert_run(struct vat_task *t, vat_expert_check check, void *ctx, struct vat_err *e);

#endif
