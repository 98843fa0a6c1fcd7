/* check.c — one dispatch from a checker spec to the shared verifier of its
 * kind.  The template layer (templates/check_task.c) and the library
 * (lib/corpus.c) both score through it.  Exports vat_check_spec and
 * vat_check_spec_as. */
#include <string.h>

#include "verifiers.h"

struct vat_verdict vat_check_spec(const json_t *spec, const char *root, const char *task_id,
                                  const char *answer, size_t len)
{
    return vat_check_spec_as(spec, root, task_id, answer, len, false);
}

struct vat_verdict vat_check_spec_as(const json_t *spec, const char *root, const char *task_id,
                                     const char *answer, size_t len, bool reveal)
{
    const char *kind = spec ? json_string_value(json_object_get(spec, "checker")) : NULL;
    if (!answer)
        return vat_verdict_make(false, 0, VAT_PARSE, "no answer given");
    if (!kind)
        return vat_verdict_make(false, 0, VAT_INTERNAL, "task '%s' has no checker spec",
                                task_id ? task_id : "");
    if (strcmp(kind, "value") == 0)
        return vat_check_value(spec, answer, len);
    if (strcmp(kind, "regex") == 0)
        return vat_check_regex_as(spec, answer, len, reveal);
    if (strcmp(kind, "sql") == 0)
        return vat_check_sql_as(spec, root, answer, len, reveal);
    if (strcmp(kind, "abstain") == 0)
        return vat_check_abstain(spec, answer, len);
    return vat_verdict_make(false, 0, VAT_INTERNAL, "unknown checker '%s'", kind);
}
