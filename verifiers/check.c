/* check.c — the default template check: one dispatch from a task's
 * checker spec to the shared verifier of its kind.  Exports
 * vat_check_task. */
#include <string.h>

#include "template.h"
#include "verifiers.h"

struct vat_verdict vat_check_task(const struct vat_task *t, const char *answer, size_t len)
{
    const char *kind = t->spec ? json_string_value(json_object_get(t->spec, "checker")) : NULL;
    if (!answer)
        return vat_verdict_make(false, 0, VAT_PARSE, "no answer given");
    if (!kind)
        return vat_verdict_make(false, 0, VAT_INTERNAL, "task '%s' has no checker spec", t->id);
    if (strcmp(kind, "value") == 0)
        return vat_check_value(t->spec, answer, len);
    if (strcmp(kind, "regex") == 0)
        return vat_check_regex(t->spec, answer, len);
    if (strcmp(kind, "sql") == 0)
        return vat_check_sql(t->spec, t->root, answer, len);
    if (strcmp(kind, "abstain") == 0)
        return vat_check_abstain(t->spec, answer, len);
    return vat_verdict_make(false, 0, VAT_INTERNAL, "unknown checker '%s'", kind);
}
