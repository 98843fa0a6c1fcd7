/* registry.c — the one table of every template, built from
 * templates/registry.def: one line `VAT_TEMPLATE(<name>)` per template, in
 * `vat list` order.  This file needs no edit when a template is added.
 *
 * Adding a template (docs/adding-a-template.md walks through it):
 *   1. Copy templates/skeleton.c to templates/<name>.c and
 *      tests/data/cases/skeleton.txt to tests/data/cases/<name>.txt, and
 *      rename vat_tmpl_skeleton and .name; the build picks the file up by
 *      itself (file glob).
 *   2. Add the line VAT_TEMPLATE(<name>) to templates/registry.def.
 *   3. Run `make test`: the contract, rules and family tests cover it.
 *
 * Exports vat_registry[] and vat_template_find(). */
#include <string.h>

#include "template.h"

/* The declarations, then the table, from the same list. */
#define VAT_TEMPLATE(n) extern const struct vat_template vat_tmpl_##n;
#include "registry.def"
#undef VAT_TEMPLATE

const struct vat_template *const vat_registry[] = {
#define VAT_TEMPLATE(n) &vat_tmpl_##n,
#include "registry.def"
#undef VAT_TEMPLATE
    NULL,
};

const struct vat_template *vat_template_find(const char *name)
{
    for (size_t i = 0; vat_registry[i]; i++)
        if (strcmp(vat_registry[i]->name, name) == 0)
            return vat_registry[i];
    return NULL;
}
