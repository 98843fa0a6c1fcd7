/* check_task.c — the default template check: a task's checker spec scored
 * by the shared verifier of its kind (verifiers/check.c).  Exports
 * vat_check_task. */
#include "template.h"
#include "verifiers.h"

struct vat_verdict vat_check_task(const struct vat_task *t, const char *answer, size_t len)
{
    return vat_check_spec(t->spec, t->root, t->id, answer, len);
}
