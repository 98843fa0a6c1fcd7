/* rules.h — the rules of docs/adding-a-template.md ("Rules the shared
 * tests enforce") as checks over one template or one drawn task.  Each
 * returns NULL when the rule is kept, else a new string
 *   "<template>: rule '<rule>': <what happened>. Mend: <how>."
 * so tests/test_rules.c can hold every registered template to them and
 * show, on deliberately broken templates, the message a newcomer gets.
 * Tasks are drawn as the pipeline draws them (master seed 20261130, the
 * template's default params, 6000 inline bytes), below scratch roots.
 * Exports the vat_rule_* functions and vat_rule_exempt. */
#ifndef VAT_RULES_H
#define VAT_RULES_H

#include "template.h"
#include "vat.h"

/* Fails the running cmocka test unless cond holds, naming the rule of
 * docs/adding-a-template.md and its mend:
 *   "<template>: rule '<rule>': <what happened>. Mend: <how>."
 * (the caller includes <cmocka.h> and <stdio.h>). */
#define VAT_RULE(cond, tm, rule, mend, ...)                                                    \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            char what_[1536];                                                                  \
            snprintf(what_, sizeof what_, __VA_ARGS__);                                        \
            fail_msg("%s: rule '%s': %s. Mend: %s", (tm)->name, (rule), what_, (mend));        \
        }                                                                                      \
    } while (0)

/* 'the trap is armed on every draw': the first draws of tasks 0..n-1 all
 * give a trap answer that scores below 1 (admission would redraw the
 * others, hiding them), and no admitted task has trap == gold. */
char *vat_rule_trap_armed(const struct vat_template *tm, unsigned n);

/* 'gold follows the file' and 'confirm follows the file' (every family
 * but regex).  Analytics and probes: tasks A and B are drawn, B's fixture
 * bytes and question (params, spec) are put in place of A's, A keeping its
 * planted truth (t->priv); reference must give B's gold; confirm must
 * refuse A's old gold on that file, and with the planted truth dropped
 * (t->priv NULL) accept the file's gold.  SQL: the main fixture and the
 * first variant trade bytes; reference must still build a gold that
 * scores 1 on the files as they are, confirm must agree with it and
 * refuse the trap query. */
char *vat_rule_gold_follows_file(const struct vat_template *tm);

/* 'confirm is a second derivation' (every family but regex): the readers
 * and queries confirm uses (generators/trace.h) must include one that
 * reference does not use. */
char *vat_rule_confirm_independent(const struct vat_template *tm);

/* 'regex gold follows the question' (the regex family): the held-out
 * strings never appear in the prompt, and confirm (the planted
 * extractions) refuses the trap pattern put in gold's place. */
char *vat_rule_regex_planted(const struct vat_template *tm);

/* 'the prompt states the answer's shape': the prompt says how to answer
 * in words that mean the shape t->spec's checker expects (a JSON number,
 * integer, object or list; a regular expression; an SQLite SELECT; the
 * abstention value), whatever the sentence. */
char *vat_rule_prompt_shape(const struct vat_task *t);

/* 'the prompt names every file': the main fixture's path is in the
 * prompt, and every fixtures/... path the prompt mentions is one of t's. */
char *vat_rule_prompt_files(const struct vat_task *t);

/* 'the prompt's data' (analytics): when the whole CSV fixture fits the
 * inline cap, the prompt's csv block is the file exactly; otherwise the
 * message says how many of the file's rows the block holds and the first
 * line that differs. */
char *vat_rule_prompt_data_whole(const struct vat_task *t, const char *block, const char *file);

/* Runs every rule above on tm (prompt rules on tasks 0..4); returns the
 * messages joined by newlines, or NULL when tm keeps them all. */
char *vat_rule_all(const struct vat_template *tm);

/* The reason tm is exempt from the rule named rule (a documented gap of
 * an existing template), or NULL. */
const char *vat_rule_exempt(const struct vat_template *tm, const char *rule);

#endif
